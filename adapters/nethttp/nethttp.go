// Package ratelimithttp plugs a [core.Limiter] into net/http.
//
// Everything HTTP-generic (keys, tiers, costs, headers, 429 bodies) lives
// in [httplimit.Middleware] and is configured with httplimit's Options; this
// package only supplies the http.ServeMux pattern of a request.
//
// With a core.Concurrent limit, mount the limiter inside any wrapper that
// abandons its handler at a timeout: http.TimeoutHandler(limit(work), d,
// msg), never limit(http.TimeoutHandler(work, d, msg)). TimeoutHandler
// answers 503 and returns while the work goes on; a limiter outside it
// would release the lease of work still running (see core.Concurrent). A
// limiter mounted twice on a request (around the mux and a route) decides
// it once.
package ratelimithttp

import (
	"fmt"
	"net/http"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// New returns middleware that limits every request it sees with l:
//
//	import ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
//
//	limit := ratelimithttp.New(limiter)
//	mux.Handle("GET /users/{id}", limit(usersHandler)) // one route
//	srv := &http.Server{Handler: limit(mux)}            // every route
//
// The route template is r.Pattern, which http.ServeMux (Go 1.22+) sets
// when it routes a request. Wrapped around a single route, as above, the
// pattern is known ("GET /users/{id}"). Wrapped around the whole mux, the
// request has not been routed yet and r.Pattern is empty: all routes share
// the route "", which is fine without httplimit.WithRouteScope; with it, use
// [Handler], which asks the mux for the pattern first.
//
// With after-handler work (httplimit.WithFinish, httplimit.WithChargeIf), the
// handler writes through a status-recording wrapper and that work gets
// the final status, also when it panics (httplimit.Middleware.Serve).
//
// New panics if l is nil or an option is invalid: configuration errors show
// at start-up.
func New(l *core.Limiter, opts ...httplimit.Option) func(http.Handler) http.Handler {
	mw := mustMiddleware("New", l, opts)
	return func(next http.Handler) http.Handler {
		return mw.Handler(next, func(r *http.Request) string { return r.Pattern })
	}
}

// A Mux routes requests and tells which pattern a request matches;
// *http.ServeMux is one.
type Mux interface {
	http.Handler
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// Handler returns mux limited by l, with the route template of each request
// taken from mux.Handler(r) before the request is served, so that
// httplimit.WithRouteScope works for every route of the mux:
//
//	srv := &http.Server{Handler: ratelimithttp.Handler(mux, limiter, httplimit.WithRouteScope())}
//
// Unmatched requests have the pattern "". The mux matches each request
// twice (here and when serving it). Handler panics if l is nil or an option
// is invalid.
func Handler(mux Mux, l *core.Limiter, opts ...httplimit.Option) http.Handler {
	mw := mustMiddleware("Handler", l, opts)
	return mw.Handler(mux, func(r *http.Request) string {
		_, pattern := mux.Handler(r)
		return pattern
	})
}

func mustMiddleware(fn string, l *core.Limiter, opts []httplimit.Option) *httplimit.Middleware {
	mw, err := httplimit.New(l, opts...)
	if err != nil {
		panic(fmt.Sprintf("ratelimithttp.%s: %v", fn, err))
	}
	return mw
}
