// Package ratelimitgin plugs a [core.Limiter] into gin.
//
// Everything HTTP-generic (keys, tiers, costs, headers, 429 bodies) lives
// in [core.Middleware] and is configured with core's HTTPOptions; this
// package only supplies gin's route template, c.FullPath(), and stops the
// chain with c.Abort on a denial.
package ratelimitgin

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/ratelimitkit/ratelimit/core"
)

// New returns gin middleware that limits every request it sees with l:
//
//	import ratelimitgin "github.com/ratelimitkit/ratelimit/adapters/gin"
//
//	r := gin.New()
//	r.Use(ratelimitgin.New(limiter))                      // every route
//	api := r.Group("/api", ratelimitgin.New(apiLimiter))  // a group
//	r.POST("/login", ratelimitgin.New(loginLimiter), login) // one route
//
// The route template is c.FullPath() ("/users/:id", empty for unmatched
// requests), used with core.HTTPRouteScope. The default key is the TCP
// peer address (core.RemoteAddrKey), independent of gin's ClientIP and its
// trusted-proxy settings; use a keyfunc extractor behind a proxy. gin's
// path parameters are copied into the request's path values, so
// keyfunc.PathValue reads them as it does with ServeMux and chi.
//
// A denied request gets its rate-limit fields and the core deny handler's
// response (by default a problem+json 429), and the chain is aborted. After
// the handlers of an admitted request, core.Middleware.Finish gets
// c.Writer.Status(), also when a handler panics (core.HTTPFinish, core.HTTPChargeIf). New
// panics if l is nil or an option is invalid: configuration errors show at
// start-up, as with core.MustNewLimiter.
func New(l *core.Limiter, opts ...core.HTTPOption) gin.HandlerFunc {
	mw, err := core.NewMiddleware(l, opts...)
	if err != nil {
		panic(fmt.Sprintf("ratelimitgin.New: %v", err))
	}
	return func(c *gin.Context) {
		for _, p := range c.Params { // so keyfunc.PathValue works as with ServeMux and chi
			c.Request.SetPathValue(p.Key, p.Value)
		}
		o := mw.Decide(c.Writer, c.Request, c.FullPath())
		switch {
		case o.Allowed() && mw.Finishes():
			next(c, mw, o)
			return
		case o.Allowed():
			c.Next()
			return
		}
		mw.Deny(c.Writer, c.Request, o)
		c.Abort()
	}
}

// next runs the rest of the chain, then mw.Finish with the final status,
// also when a handler panics (the panic goes on).
func next(c *gin.Context, mw *core.Middleware, o core.Outcome) {
	returned := false
	defer func() {
		if !returned {
			mw.Finish(c.Writer, c.Request, o, core.PanicStatus(c.Writer.Status(), c.Writer.Written()))
		}
	}()
	c.Next()
	returned = true
	mw.Finish(c.Writer, c.Request, o, c.Writer.Status())
}
