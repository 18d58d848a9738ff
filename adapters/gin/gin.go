// Package ratelimitgin plugs a [core.Limiter] into gin.
//
// Everything HTTP-generic (keys, tiers, costs, headers, 429 bodies) lives
// in [httplimit.Middleware] and is configured with core's HTTPOptions; this
// package only supplies gin's route template, c.FullPath(), and stops the
// chain with c.Abort on a denial.
//
// With a core.Concurrent limit, register the limiter after (inside) any
// middleware that abandons its handler at a timeout (one that runs
// c.Next in a goroutine and answers when the time is up, as
// gin-contrib/timeout does): such a middleware returns while the work
// goes on, and a limiter before it would release the lease of work still
// running (see core.Concurrent). A limiter mounted twice on a request (a
// group and its route) decides it once.
package ratelimitgin

import (
	"bufio"
	"fmt"
	"net"

	"github.com/gin-gonic/gin"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
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
// requests), used with httplimit.WithRouteScope. The default key is the TCP
// peer address (httplimit.RemoteAddrKey), independent of gin's ClientIP and its
// trusted-proxy settings; use a keyfunc extractor behind a proxy. gin's
// path parameters are copied into the request's path values, so
// keyfunc.PathValue reads them as it does with ServeMux and chi.
//
// A denied request gets its rate-limit fields and the core deny handler's
// response (by default a problem+json 429), and the chain is aborted. After
// the handlers of an admitted request, httplimit.Middleware.Finish gets
// c.Writer.Status(), also when a handler panics (httplimit.WithFinish, httplimit.WithChargeIf),
// or httplimit.HijackedStatus for a handler that hijacked the connection. The
// handlers get c.Request with the request's httplimit.Outcome in its context
// (httplimit.OutcomeFromContext). New
// panics if l is nil or an option is invalid: configuration errors show at
// start-up, as with core.MustNewLimiter.
func New(l *core.Limiter, opts ...httplimit.Option) gin.HandlerFunc {
	mw, err := httplimit.New(l, opts...)
	if err != nil {
		panic(fmt.Sprintf("ratelimitgin.New: %v", err))
	}
	return func(c *gin.Context) {
		for _, p := range c.Params { // so keyfunc.PathValue works as with ServeMux and chi
			c.Request.SetPathValue(p.Key, p.Value)
		}
		o := mw.Decide(c.Writer, c.Request, c.FullPath())
		c.Request = o.Request(c.Request) // the Outcome, for httplimit.OutcomeFromContext
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
// also when a handler panics (the panic goes on), or the one
// httplimit.HijackedStatus gives a handler that hijacked the connection.
func next(c *gin.Context, mw *httplimit.Middleware, o httplimit.Outcome) {
	hw := &hijackWriter{ResponseWriter: c.Writer}
	c.Writer = hw
	returned := false
	defer func() {
		if !returned {
			mw.Finish(c.Writer, c.Request, o, hw.final(httplimit.PanicStatus(c.Writer.Status(), c.Writer.Written())))
		}
	}()
	c.Next()
	returned = true
	mw.Finish(c.Writer, c.Request, o, hw.final(c.Writer.Status()))
}

// hijackWriter records the status of a hijack: gin's writer counts a
// hijacked connection as written with its default status, 200.
type hijackWriter struct {
	gin.ResponseWriter
	hijacked int // the status httplimit.HijackedStatus gave the hijack; 0: none
}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	status := httplimit.HijackedStatus(w.Status(), w.Written())
	conn, rw, err := w.ResponseWriter.Hijack()
	if err == nil {
		w.hijacked = status
	}
	return conn, rw, err
}

// final returns status, or the status of a hijack.
func (w *hijackWriter) final(status int) int {
	if w.hijacked != 0 {
		return w.hijacked
	}
	return status
}
