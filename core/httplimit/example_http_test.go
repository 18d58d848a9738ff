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

// SetHeaders writes the fields of a Result in any combination of formats.
func ExampleSetHeaders() {
	res := core.NewResult(
		core.Decision{Limit: core.PerSecond(10).WithBurst(100).WithName("burst"), Allowed: true, Remaining: 99, ResetAfter: 100 * time.Millisecond},
		core.Decision{Limit: core.PerDay(1000).WithName("daily"), Allowed: true, Remaining: 950, ResetAfter: 72 * time.Minute},
	)
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

	h := http.Header{}
	httplimit.SetHeaders(h, res, httplimit.HeadersIETF|httplimit.HeadersLegacy|httplimit.HeadersXRateLimit, now)

	for _, name := range []string{"RateLimit-Policy", "RateLimit", "RateLimit-Limit", "RateLimit-Remaining",
		"RateLimit-Reset", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		fmt.Printf("%s: %s\n", name, h.Get(name))
	}
	// Output:
	// RateLimit-Policy: "burst";q=10;w=1, "daily";q=1000;w=86400
	// RateLimit: "burst";r=99;t=1
	// RateLimit-Limit: 100
	// RateLimit-Remaining: 99
	// RateLimit-Reset: 1
	// X-RateLimit-Limit: 100
	// X-RateLimit-Remaining: 99
	// X-RateLimit-Reset: 1735787046
}

// A Middleware serves every adapter; Handler wraps any http.Handler.
func ExampleMiddleware_Handler() {
	// A frozen clock keeps the output exact; real code calls memstore.New().
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(2).WithName("api")))
	if err != nil {
		panic(err)
	}
	mw, err := httplimit.New(limiter)
	if err != nil {
		panic(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })
	h := mw.Handler(hello, func(*http.Request) string { return "/hello" })

	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/hello", nil))
		fmt.Println(w.Code, "RateLimit:", w.Header().Get("RateLimit"))
		if w.Code != http.StatusOK {
			fmt.Println("Retry-After:", w.Header().Get("Retry-After"))
			fmt.Print(w.Body.String())
		}
	}
	// Output:
	// 200 RateLimit: "api";r=1;t=30
	// 200 RateLimit: "api";r=0;t=30
	// 429 RateLimit: "api";r=0;t=30
	// Retry-After: 30
	// {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","status":429,"detail":"Too many requests; retry after 30 seconds.","violated-policies":["api"],"retry_after":30}
}

// A handler reads its request's Outcome from its context: the tier and
// what is left, or the lease a Concurrency limit holds for it (which the
// middleware renews while the handler runs).
func ExampleOutcomeFromContext() {
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerHour(100).WithName("api"), core.Concurrent(2).WithName("running")))
	if err != nil {
		panic(err)
	}
	mw, err := httplimit.New(limiter)
	if err != nil {
		panic(err)
	}
	export := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, ok := httplimit.OutcomeFromContext(r.Context())
		if !ok {
			fmt.Fprintln(w, "not limited")
			return
		}
		fmt.Fprintf(w, "tier %s, %d left this hour, holding a lease: %t\n",
			o.Result.Tier, o.Result.Decision(0).Remaining, o.Result.Lease != nil)
	})
	h := mw.Handler(export, func(*http.Request) string { return "/export" })

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/export", nil))
	fmt.Print(w.Body.String())
	// Output:
	// tier default, 99 left this hour, holding a lease: true
}
