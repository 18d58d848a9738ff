// Package ratelimitecho plugs a [core.Limiter] into echo.
//
// Everything HTTP-generic (keys, tiers, costs, headers, 429 bodies) lives
// in [httplimit.Middleware] and is configured with core's HTTPOptions; this
// package only supplies echo's route template, c.Path(), and turns a denial
// into an *echo.HTTPError.
//
// With a core.Concurrent limit, register the limiter after (inside)
// echo's middleware.Timeout, which runs the rest of the chain in a
// goroutine and answers 503 while the work goes on: a limiter registered
// before it would release the lease of work still running (see
// core.Concurrent). middleware.ContextTimeout only cancels the context
// and is safe in either place. A limiter mounted twice on a request (a
// group and its route) decides it once.
package ratelimitecho

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// New returns echo middleware that limits every request it sees with l:
//
//	import ratelimitecho "github.com/ratelimitkit/ratelimit/adapters/echo"
//
//	e := echo.New()
//	e.Use(ratelimitecho.New(limiter))                      // every route
//	api := e.Group("/api", ratelimitecho.New(apiLimiter))  // a group
//	e.POST("/login", login, ratelimitecho.New(loginLimiter)) // one route
//
// Register it with Use, not Pre: the route template is c.Path()
// ("/users/:id"), known once echo has routed; it is used with
// httplimit.WithRouteScope. echo's path parameters are copied into the
// request's path values, so keyfunc.PathValue reads them as it does with
// ServeMux and chi.
//
// As echo's own middlewares do, a denied request gets its rate-limit fields
// and Retry-After, then New returns an *echo.HTTPError (429; 413 when the
// cost can never fit; 503 when the limiter fails closed) for the app's
// WithErrorHandler to render; a request that cannot be limited (its key
// function failed) returns a 500 *echo.HTTPError whose Internal error holds
// the cause. httplimit.WithDenyHandler and httplimit.WithErrorHandler, when given,
// render those responses themselves instead, and New returns nil. After the
// handler of an admitted request, httplimit.Middleware.Finish gets the final
// status (httplimit.WithFinish, httplimit.WithChargeIf): c.Response().Status, or for a returned error the
// status echo's default error handler gives it, also when the handler
// panics, or httplimit.HijackedStatus for a handler that hijacked the
// connection. The handler gets c.Request() with the request's
// httplimit.Outcome in its context (httplimit.OutcomeFromContext). New panics if l is nil or an option is
// invalid: configuration errors show at start-up.
func New(l *core.Limiter, opts ...httplimit.Option) echo.MiddlewareFunc {
	mw, err := httplimit.New(l, opts...)
	if err != nil {
		panic(fmt.Sprintf("ratelimitecho.New: %v", err))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			w, r := c.Response(), c.Request()
			for i, name := range c.ParamNames() { // so keyfunc.PathValue works as with ServeMux and chi
				r.SetPathValue(name, c.ParamValues()[i])
			}
			o := mw.Decide(w, r, c.Path())
			c.SetRequest(o.Request(r)) // the Outcome, for httplimit.OutcomeFromContext
			switch {
			case o.Allowed() && mw.Finishes():
				return serve(c, next, mw, o)
			case o.Allowed():
				return next(c)
			case mw.Custom(o): // the user's handler renders it
				mw.Deny(w, r, o)
				return nil
			}
			return echo.NewHTTPError(o.Status(), http.StatusText(o.Status())).SetInternal(o.Err)
		}
	}
}

// serve runs next, then mw.Finish with the final status, also when next
// panics (the panic goes on). A handler's error is rendered by echo after
// every middleware has returned, so its status is the one echo's default
// WithErrorHandler would write: an *echo.HTTPError's code, else 500.
func serve(c echo.Context, next echo.HandlerFunc, mw *httplimit.Middleware, o httplimit.Outcome) error {
	w, r := c.Response(), c.Request()
	hw := &hijackWriter{ResponseWriter: w.Writer, res: w}
	w.Writer = hw
	returned := false
	defer func() {
		if !returned {
			mw.Finish(w, r, o, hw.final(httplimit.PanicStatus(w.Status, w.Committed)))
		}
	}()
	err := next(c)
	returned = true
	mw.Finish(w, r, o, hw.final(finalStatus(w, err)))
	return err
}

// hijackWriter records the status of a hijack under echo's Response, which
// does not: httplimit.HijackedStatus of what echo had written before it.
type hijackWriter struct {
	http.ResponseWriter
	res      *echo.Response
	hijacked int // 0: none
}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	status := httplimit.HijackedStatus(w.res.Status, w.res.Committed)
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = status
	}
	return conn, rw, err
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *hijackWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes the wrapped writer, for code that asserts http.Flusher.
func (w *hijackWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// final returns status, or the status of a hijack.
func (w *hijackWriter) final(status int) int {
	if w.hijacked != 0 {
		return w.hijacked
	}
	return status
}

func finalStatus(w *echo.Response, err error) int {
	var he *echo.HTTPError
	switch {
	case err == nil || w.Committed:
		return w.Status
	case errors.As(err, &he):
		return he.Code
	}
	return http.StatusInternalServerError
}
