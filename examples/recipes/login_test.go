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

// login returns a login attempt for account from the address remote, with
// a wrong password.
func login(account, remote string) *http.Request { return loginWith(account, "guess", remote) }

// loginWith returns a login attempt for account with password from the
// address remote.
func loginWith(account, password, remote string) *http.Request {
	form := url.Values{"account": {account}, "password": {password}}.Encode()
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = remote
	return r
}

// signIn answers 200 for the password "right", else 401.
var signIn = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.PostFormValue("password") != "right" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusOK)
})

// Successful logins are never counted; five failed attempts a minute per
// account and address are, and the sixth attempt gets 429 with Retry-After
// (the right password too, until then). The fields show the quota the
// check saw, before the attempt's own charge. Another account from the
// same address has its own five, but the address as a whole stops after 30
// failures, whatever the accounts.
func ExampleLoginGuard() {
	clk := newClock()
	ip := keyfunc.Must(keyfunc.PeerIP())
	guard, err := recipes.LoginGuard(storeAt(clk), storeAt(clk), ip, 1)
	if err != nil {
		panic(err)
	}
	h := guard(signIn)

	for range 3 {
		serve(h, loginWith("alice", "right", "203.0.113.7:5000"), "RateLimit")
	}
	for range 6 {
		serve(h, login("alice", "203.0.113.7:5000"), "RateLimit", "Retry-After")
	}
	serve(h, loginWith("alice", "right", "203.0.113.7:5000"), "RateLimit", "Retry-After")
	serve(h, login("bob", "203.0.113.7:5000"), "RateLimit")

	failures := 8 // so far, from this address: alice's five 401s and two 429s, bob's 401
	for i := range 30 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, login(fmt.Sprintf("user%d", i), "203.0.113.7:5000"))
		if w.Code == http.StatusTooManyRequests {
			fmt.Printf("after %d failures: %d RateLimit: %s Retry-After: %s\n", failures, w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
			break
		}
		failures++
	}
	// Output:
	// 200 RateLimit: "login";r=5;t=0
	// 200 RateLimit: "login";r=5;t=0
	// 200 RateLimit: "login";r=5;t=0
	// 401 RateLimit: "login";r=5;t=0
	// 401 RateLimit: "login";r=4;t=60
	// 401 RateLimit: "login";r=3;t=60
	// 401 RateLimit: "login";r=2;t=60
	// 401 RateLimit: "login";r=1;t=60
	// 429 RateLimit: "login";r=0;t=60 Retry-After: 60
	// 429 RateLimit: "login";r=0;t=60 Retry-After: 60
	// 401 RateLimit: "login";r=5;t=0
	// after 30 failures: 429 RateLimit: "login-ip";r=0;t=6 Retry-After: 6
}

// With Redis down the guard still denies the sixth failed attempt: each
// node counts on its own fallback (here one node, so the full 5), and
// still only the failures.
func ExampleLoginGuard_redisDown() {
	clk := newClock()
	ip := keyfunc.Must(keyfunc.PeerIP())
	guard, err := recipes.LoginGuard(downStore{}, storeAt(clk), ip, 1)
	if err != nil {
		panic(err)
	}
	h := guard(signIn)
	serve(h, loginWith("alice", "right", "203.0.113.7:5000"))
	for range 6 {
		serve(h, login("alice", "203.0.113.7:5000"), "Retry-After")
	}
	// Output:
	// 200
	// 401
	// 401
	// 401
	// 401
	// 401
	// 429 Retry-After: 60
}
