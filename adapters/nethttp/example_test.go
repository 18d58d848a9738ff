package ratelimithttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// Limit every route of an http.ServeMux with Handler, which knows each
// request's pattern before the mux serves it.
func ExampleHandler() {
	// A frozen clock keeps the output exact; real code calls memstore.New().
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(2).WithName("api")))
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") })
	h := ratelimithttp.Handler(mux, limiter)

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

// Limit one route with New; r.Pattern is known there.
func ExampleNew() {
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	if err != nil {
		panic(err)
	}
	logins, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(5).WithName("login")))
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	login := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "welcome") })
	mux.Handle("POST /login", ratelimithttp.New(logins)(login))

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/login", nil))
	fmt.Println(w.Code, w.Header().Get("RateLimit"))
	// Output:
	// 200 "login";r=4;t=12
}
