package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// A login guard that counts failed logins only: two a minute here. The
// successful logins cost nothing; the third attempt after two failures is
// denied before the handler runs, even with the right password.
func ExampleWithChargeIf() {
	// A frozen clock keeps the output exact; real code calls memstore.New().
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(2).WithName("login")))
	if err != nil {
		panic(err)
	}
	mw, err := httplimit.New(limiter, httplimit.WithChargeIf(httplimit.FailedRequests))
	if err != nil {
		panic(err)
	}
	signIn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Password") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
		}
	})
	h := mw.Handler(signIn, func(*http.Request) string { return "/login" })

	for _, password := range []string{"right", "right", "guess", "guess", "right"} {
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.Header.Set("X-Password", password)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(password, w.Code, "RateLimit:", w.Header().Get("RateLimit"))
	}
	// Output:
	// right 200 RateLimit: "login";r=2;t=0
	// right 200 RateLimit: "login";r=2;t=0
	// guess 401 RateLimit: "login";r=2;t=0
	// guess 401 RateLimit: "login";r=1;t=30
	// right 429 RateLimit: "login";r=0;t=30
}
