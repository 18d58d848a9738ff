// Package ratelimitecho plugs a [core.Limiter] into echo. Everything
// HTTP-generic lives in [httplimit.Middleware], configured with
// httplimit's Options; this package supplies echo's route template, the
// response's status, and turns a denial into an *echo.HTTPError. With a
// core.Concurrent limit, register the limiter after (inside) echo's
// middleware.Timeout, which answers 503 while the work goes on. A limiter
// mounted twice on a request (a group and its route) decides it once.
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
//	e.POST("/login", login, ratelimitecho.New(loginLimiter))
//
// Register it with Use, not Pre: the route template is c.Path()
// ("/users/:id"), known once echo has routed; path parameters are copied
// into the request's path values (keyfunc.PathValue). A denial is an
// *echo.HTTPError (429, 413, 503; 500 with the cause in Internal when the
// key function failed) for the app's HTTPErrorHandler, unless
// httplimit.WithDenyHandler or WithErrorHandler render it. A handler's
// returned error has the status echo's default HTTPErrorHandler gives it.
// New panics if l is nil or an option is invalid.
func New(l *core.Limiter, opts ...httplimit.Option) echo.MiddlewareFunc {
	mw, err := httplimit.New(l, opts...)
	if err != nil {
		panic(fmt.Sprintf("ratelimitecho.New: %v", err))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			res, r := c.Response(), c.Request()
			for i, name := range c.ParamNames() {
				r.SetPathValue(name, c.ParamValues()[i])
			}
			var hw *hijackWriter // read only when mw.Finishes
			if mw.Finishes() {
				hw = &hijackWriter{ResponseWriter: res.Writer, res: res}
				res.Writer = hw
			}
			o := mw.Serve(res, r, c.Path(), func(_ http.ResponseWriter, r *http.Request) {
				c.SetRequest(r)
				err = next(c)
			}, func() (int, bool) { return hw.status(err) })
			switch {
			case o.Allowed():
				return err
			case !mw.Custom(o): // echo renders it, unless the user's handler does
				return echo.NewHTTPError(o.Status(), http.StatusText(o.Status())).SetInternal(o.Err)
			}
			mw.Deny(res, r, o)
			return nil
		}
	}
}

// hijackWriter records the status of a hijack, which echo's Response does not.
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

func (w *hijackWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *hijackWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// status is a hijack's, else the one echo will render for err, else echo's.
func (w *hijackWriter) status(err error) (int, bool) {
	var he *echo.HTTPError
	switch {
	case w.hijacked != 0:
		return w.hijacked, true
	case err == nil || w.res.Committed:
		return w.res.Status, w.res.Committed
	case errors.As(err, &he):
		return he.Code, true
	}
	return http.StatusInternalServerError, true
}
