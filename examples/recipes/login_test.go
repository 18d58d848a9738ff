package recipes_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/ratelimitkit/ratelimit/examples/recipes"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// login returns a login attempt for account from the address remote.
func login(account, remote string) *http.Request {
	form := url.Values{"account": {account}, "password": {"guess"}}.Encode()
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = remote
	return r
}

// Five attempts a minute per account and address; the sixth gets 429 with
// Retry-After. Another account from the same address has its own five, but
// the address as a whole stops after 30 attempts, whatever the accounts.
func ExampleLoginGuard() {
	clk := newClock()
	ip := keyfunc.Must(keyfunc.PeerIP())
	guard, err := recipes.LoginGuard(storeAt(clk), storeAt(clk), ip, 1)
	if err != nil {
		panic(err)
	}
	h := guard(ok)

	for range 6 {
		serve(h, login("alice", "203.0.113.7:5000"), "RateLimit", "Retry-After")
	}
	serve(h, login("bob", "203.0.113.7:5000"), "RateLimit")

	for i := range 30 { // 7 attempts so far: the address has 23 left
		w := httptest.NewRecorder()
		h.ServeHTTP(w, login(fmt.Sprintf("user%d", i), "203.0.113.7:5000"))
		if w.Code != http.StatusOK {
			fmt.Printf("attempt %d: %d RateLimit: %s Retry-After: %s\n", 8+i, w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
			break
		}
	}
	// Output:
	// 200 RateLimit: "login";r=4;t=60
	// 200 RateLimit: "login";r=3;t=60
	// 200 RateLimit: "login";r=2;t=60
	// 200 RateLimit: "login";r=1;t=60
	// 200 RateLimit: "login";r=0;t=60
	// 429 RateLimit: "login";r=0;t=60 Retry-After: 60
	// 200 RateLimit: "login";r=4;t=60
	// attempt 31: 429 RateLimit: "login-ip";r=0;t=6 Retry-After: 6
}

// With Redis down the guard still denies the sixth attempt: each node
// counts on its own fallback (here one node, so the full 5).
func ExampleLoginGuard_redisDown() {
	clk := newClock()
	ip := keyfunc.Must(keyfunc.PeerIP())
	guard, err := recipes.LoginGuard(downStore{}, storeAt(clk), ip, 1)
	if err != nil {
		panic(err)
	}
	h := guard(ok)
	for range 6 {
		serve(h, login("alice", "203.0.113.7:5000"), "Retry-After")
	}
	// Output:
	// 200
	// 200
	// 200
	// 200
	// 200
	// 429 Retry-After: 60
}
