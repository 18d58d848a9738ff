// Package ratelimitchi plugs a [core.Limiter] into chi.
//
// Everything HTTP-generic (keys, tiers, costs, headers, 429 bodies) lives
// in [httplimit.Middleware] and is configured with httplimit's Options; this
// package only supplies chi's route pattern of a request.
//
// With a core.Concurrent limit, mount the limiter inside any wrapper that
// abandons its handler at a timeout (http.TimeoutHandler around the
// router, say): such a wrapper returns while the work goes on, and a
// limiter outside it would release the lease of work still running (see
// core.Concurrent). chi's middleware.Timeout only cancels the context and
// waits, so it is safe in either place. A limiter mounted twice on a
// request (r.Use and r.With) decides it once.
package ratelimitchi

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// New returns chi middleware that limits every request it sees with l. It
// works wherever chi takes middleware:
//
//	import ratelimitchi "github.com/ratelimitkit/ratelimit/adapters/chi"
//
//	r := chi.NewRouter()
//	r.Use(ratelimitchi.New(limiter))                          // every route
//	r.Group(func(r chi.Router) { r.Use(ratelimitchi.New(l)) }) // a group
//	r.Route("/api", func(r chi.Router) { r.Use(ratelimitchi.New(l)) })
//	r.With(ratelimitchi.New(loginLimiter)).Post("/login", login) // one route
//
// The route template is the full chi pattern of the request
// ("/api/users/{id}"), used with httplimit.WithRouteScope. chi runs r.Use
// middleware before it routes, when the pattern is not known yet, so New
// looks it up in the router tree (chi's Routes.Find from the top router)
// instead of reading RouteContext.RoutePattern; the result is the same
// wherever the middleware is mounted. Unmatched requests, and requests not
// served by a chi router, have the pattern "".
//
// With after-handler work (httplimit.WithFinish, httplimit.WithChargeIf), the
// handler writes through a status-recording wrapper and that work gets
// the final status, also when it panics (httplimit.Middleware.Serve).
//
// New panics if l is nil or an option is invalid: configuration errors show
// at start-up.
func New(l *core.Limiter, opts ...httplimit.Option) func(http.Handler) http.Handler {
	mw, err := httplimit.New(l, opts...)
	if err != nil {
		panic(fmt.Sprintf("ratelimitchi.New: %v", err))
	}
	return func(next http.Handler) http.Handler {
		return mw.Handler(next, routePattern)
	}
}

// routePattern finds the pattern of r in the top chi router.
func routePattern(r *http.Request) string {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil || rctx.Routes == nil {
		return ""
	}
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	if path == "" {
		path = "/"
	}
	return rctx.Routes.Find(chi.NewRouteContext(), r.Method, path)
}
