package recipes_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/examples/recipes"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// Every response names both limits in RateLimit-Policy. The eleventh
// request of a second is denied by the per-second limit and charges the
// daily quota nothing; request 10,001 of the day is denied by the daily
// quota until midnight UTC.
func ExampleQuotaLimiter() {
	clk := newClock()                                  // 2025-01-02 03:04:05 UTC
	limiter, err := recipes.QuotaLimiter(storeAt(clk)) // the deny cache follows the store's clock
	if err != nil {
		panic(err)
	}
	customer := keyfunc.Must(keyfunc.Header("X-API-Key")) // or keyfunc.ContextValue after authentication
	h := ratelimithttp.New(limiter, httplimit.WithKey(customer))(ok)
	request := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/reports", nil)
		r.Header.Set("X-API-Key", "key-of-acme")
		return r
	}

	serve(h, request(), "RateLimit-Policy", "RateLimit")
	for range 9 {
		h.ServeHTTP(httptest.NewRecorder(), request())
	}
	serve(h, request(), "RateLimit", "Retry-After")

	id, _ := customer(request())
	peek, _ := limiter.Take(context.Background(), core.Request{Identity: id}) // cost 0: charges nothing
	fmt.Println("daily remaining:", peek.Decision(1).Remaining)

	for range 999 { // the rest of the day's quota, 10 a second
		clk.Advance(time.Second)
		for range 10 {
			_, _ = limiter.Allow(context.Background(), id)
		}
	}
	clk.Advance(time.Second)
	serve(h, request(), "RateLimit", "Retry-After")
	// Output:
	// 200 RateLimit-Policy: "per-second";q=10;w=1, "daily";q=10000;w=86400 RateLimit: "per-second";r=9;t=1
	// 429 RateLimit: "per-second";r=0;t=1 Retry-After: 1
	// daily remaining: 9990
	// 429 RateLimit: "daily";r=0;t=74355 Retry-After: 74355
}
