package ratelimitgin_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gin-gonic/gin"

	ratelimitgin "github.com/ratelimitkit/ratelimit/adapters/gin"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// Limit every route of a gin engine: 2 requests per minute per client.
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

	r := gin.New()
	r.Use(ratelimitgin.New(limiter))
	r.GET("/hello", func(c *gin.Context) { c.String(http.StatusOK, "hello") })

	for range 3 {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/hello", nil))
		fmt.Println(w.Code, "RateLimit:", w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 RateLimit: "api";r=1;t=30
	// 200 RateLimit: "api";r=0;t=30
	// 429 RateLimit: "api";r=0;t=30
}

// Give each route template its own quota per client, and let health
// checks through.
func Example_perRoute() {
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(1).WithName("api")))
	if err != nil {
		panic(err)
	}

	r := gin.New()
	r.Use(ratelimitgin.New(limiter,
		httplimit.WithRouteScope(),
		httplimit.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" })))
	ok := func(c *gin.Context) { c.String(http.StatusOK, "ok") }
	r.GET("/users/:id", ok)
	r.GET("/orders/:id", ok)
	r.GET("/healthz", ok)

	for _, path := range []string{"/users/1", "/users/2", "/orders/1", "/healthz", "/healthz"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code)
	}
	// Output:
	// /users/1 200
	// /users/2 429
	// /orders/1 200
	// /healthz 200
	// /healthz 200
}
