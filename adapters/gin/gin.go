// Package ratelimitgin plugs a [core.Limiter] into gin.
//
// Everything HTTP-generic (keys, tiers, costs, headers, 429 bodies, the
// work after the handler) lives in [httplimit.Middleware] and is
// configured with httplimit's Options; this package only supplies gin's
// route template, c.FullPath(), the response's status, and stops the
// chain with c.Abort on a denial.
//
// With a core.Concurrent limit, register the limiter after (inside) any
// middleware that abandons its handler at a timeout (one that runs
// c.Next in a goroutine and answers when the time is up, as
// gin-contrib/timeout does): a limiter before it would release the lease
// of work still running. A limiter mounted twice on a request (a group
// and its route) decides it once.
package ratelimitgin

import (
	"bufio"
	"fmt"
	"net"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// New returns gin middleware that limits every request it sees with l:
//
//	r.Use(ratelimitgin.New(limiter))                        // every route
//	api := r.Group("/api", ratelimitgin.New(apiLimiter))    // a group
//	r.POST("/login", ratelimitgin.New(loginLimiter), login) // one route
//
// The route template is c.FullPath() ("/users/:id"; empty when unmatched),
// for httplimit.WithRouteScope. The default key is the TCP peer address
// (httplimit.RemoteAddrKey), not gin's ClientIP. gin's path parameters
// are copied into the request's path values, for keyfunc.PathValue. A
// denied request gets the deny handler's response (a problem+json 429 by
// default) and the chain is aborted. The handlers get c.Request carrying
// the request's httplimit.Outcome. New panics if l is nil or an option is
// invalid.
func New(l *core.Limiter, opts ...httplimit.Option) gin.HandlerFunc {
	mw, err := httplimit.New(l, opts...)
	if err != nil {
		panic(fmt.Sprintf("ratelimitgin.New: %v", err))
	}
	return func(c *gin.Context) {
		for _, p := range c.Params {
			c.Request.SetPathValue(p.Key, p.Value)
		}
		status := func() (int, bool) { return c.Writer.Status(), c.Writer.Written() }
		if mw.Finishes() { // gin's writer reads a hijack as 200
			hw := &hijackWriter{ResponseWriter: c.Writer}
			c.Writer, status = hw, hw.status
		}
		o := mw.Serve(c.Writer, c.Request, c.FullPath(), func(_ http.ResponseWriter, r *http.Request) {
			c.Request = r
			c.Next()
		}, status)
		if !o.Allowed() {
			mw.Deny(c.Writer, c.Request, o)
			c.Abort()
		}
	}
}

// hijackWriter records the status of a hijack ([httplimit.HijackedStatus]).
type hijackWriter struct {
	gin.ResponseWriter
	hijacked int // 0: none
}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	status := httplimit.HijackedStatus(w.Status(), w.Written())
	conn, rw, err := w.ResponseWriter.Hijack()
	if err == nil {
		w.hijacked = status
	}
	return conn, rw, err
}

func (w *hijackWriter) status() (int, bool) {
	if w.hijacked != 0 {
		return w.hijacked, true
	}
	return w.Status(), w.Written()
}
