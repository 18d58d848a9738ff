package ratelimitecho_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/labstack/echo/v4"

	ratelimitecho "github.com/ratelimitkit/ratelimit/adapters/echo"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// Limit every route of an echo server: 2 requests per minute per client.
// A denial is an *echo.HTTPError, rendered by the app's HTTPErrorHandler.
func Example() {
	// A frozen clock keeps the output exact; real code calls memstore.New().
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(2).WithName("api")))
	if err != nil {
		panic(err)
	}

	e := echo.New()
	e.Use(ratelimitecho.New(limiter))
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })

	for range 3 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/hello", nil))
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
	// {"message":"Too Many Requests"}
}

// With a deny handler the middleware renders denials itself: here the
// core problem document.
func Example_denyHandler() {
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(1).WithName("api")))
	if err != nil {
		panic(err)
	}

	e := echo.New()
	e.Use(ratelimitecho.New(limiter, httplimit.WithDenyHandler(httplimit.DefaultDenyHandler)))
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })

	for range 2 {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/hello", nil))
		fmt.Println(w.Code, w.Header().Get("Content-Type"))
	}
	// Output:
	// 200 text/plain; charset=UTF-8
	// 429 application/problem+json
}
