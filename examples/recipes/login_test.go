package recipes_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratelimitkit/ratelimit/examples/recipes"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// login returns a login attempt for account from the address remote, with
// a wrong password.
func login(account, remote string) *http.Request { return loginWith(account, "guess", remote) }

// loginWith returns a login attempt for account with password from the
// address remote.
func loginWith(account, password, remote string) *http.Request {
	body, err := json.Marshal(map[string]string{"account": account, "password": password})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/login", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.RemoteAddr = remote
	return r
}

// signIn reads the JSON body the guard's keyfunc.FormValue("account")
// read first and put back: 200 for the password "right", else 401 (400
// for a body that is not JSON).
var signIn = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var in struct{ Account, Password string }
	switch err := json.NewDecoder(r.Body).Decode(&in); {
	case err != nil:
		w.WriteHeader(http.StatusBadRequest)
	case in.Password != "right":
		w.WriteHeader(http.StatusUnauthorized)
	default:
		w.WriteHeader(http.StatusOK)
	}
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
