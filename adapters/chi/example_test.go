package ratelimitchi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/go-chi/chi/v5"

	ratelimitchi "github.com/ratelimitkit/ratelimit/adapters/chi"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// Limit every route of a chi router, each route pattern with its own quota
// per client: /users/1 and /users/2 share "/users/{id}".
func Example() {
	// A frozen clock keeps the output exact; real code calls memstore.New().
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(1).WithName("api")))
	if err != nil {
		panic(err)
	}

	r := chi.NewRouter()
	r.Use(ratelimitchi.New(limiter, httplimit.WithRouteScope()))
	ok := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }
	r.Get("/users/{id}", ok)
	r.Get("/orders/{id}", ok)

	for _, path := range []string{"/users/1", "/users/2", "/orders/1"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// /users/1 200 "api";r=0;t=60
	// /users/2 429 "api";r=0;t=60
	// /orders/1 200 "api";r=0;t=60
}

// Limit one route only, with chi's r.With.
func Example_oneRoute() {
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	logins, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(5).WithName("login")))
	if err != nil {
		panic(err)
	}

	r := chi.NewRouter()
	r.With(ratelimitchi.New(logins)).Post("/login", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "welcome") })
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "home") })

	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "/login", nil),
		httptest.NewRequest(http.MethodGet, "/", nil),
	} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		fmt.Printf("%s %s %d RateLimit-Policy: %q\n", req.Method, req.URL.Path, w.Code, w.Header().Get("RateLimit-Policy"))
	}
	// Output:
	// POST /login 200 RateLimit-Policy: "\"login\";q=5;w=60"
	// GET / 200 RateLimit-Policy: ""
}
