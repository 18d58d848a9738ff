package httplimit

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
)

// A FinishFunc runs after the handler of a request the [Middleware] let
// through has returned, with the request's [Outcome] and the response's
// status ([Middleware.Finish]).
type FinishFunc = func(r *http.Request, o Outcome, status int)

// WithFinish sets fn to run once after the handler of every request the
// middleware let through, also when the handler panics (fn runs, then the
// panic goes on), with the final status of the response: what the handler
// wrote, 200 when it wrote nothing, 500 when it panicked before writing
// (what a recovering middleware answers), [StatusHijacked] when it
// hijacked the connection before writing a status. For work that needs the
// response, such as counting statuses per tier. fn runs after the
// middleware's own steps: the release of a [core.Concurrency] limit's lease and
// the charge of [WithChargeIf]. A panic in fn itself is not recovered.
func WithFinish(fn FinishFunc) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithFinish"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: WithFinish: finish func must not be nil")
		}
		m.finish = fn
		return nil
	}
}

// orderFinish lists the work after the handler, once every option is
// applied: the middleware's own steps first, in a fixed order (the release
// of the lease when a tier has a [core.Concurrency] limit, the charge of
// [WithChargeIf]), then the user's [WithFinish], so that a panic in it
// skips none of them. Without any, m.after stays nil.
func (m *Middleware) orderFinish() {
	if _, _, ok := m.limiter.ConcurrencyLimit(); ok {
		m.after = append(m.after, m.releaseAfter)
	}
	if m.chargeIf != nil {
		m.after = append(m.after, m.chargeAfter)
	}
	if m.finish != nil {
		m.after = append(m.after, m.finish)
	}
}

// Finishes reports whether m has work after the handler ([Middleware.Finish]
// does something): [WithFinish], [WithChargeIf], a [core.Concurrency] limit in
// a tier of the limiter. Adapters skip reading the
// status, and net/http wrapping the ResponseWriter, when it does not, so
// the common path costs nothing.
func (m *Middleware) Finishes() bool { return len(m.after) > 0 }

// Finish is the after-handler hook every adapter calls, once, after the
// handler of a request Decide allowed has returned, or while it panics,
// before the panic goes on, with the response's final status (see
// [WithFinish] for the status of a panic). It runs the steps of m in
// order: the release of the request's lease ([core.Limiter.Release]), the
// charge of [WithChargeIf], then the [WithFinish] func. It does nothing
// unless m [Middleware.Finishes], and nothing for a request the same
// limiter had admitted before ([Middleware.Decide]): its first middleware
// finishes it.
func (m *Middleware) Finish(w http.ResponseWriter, r *http.Request, o Outcome, status int) {
	if o.again {
		return
	}
	for _, step := range m.after {
		step(r, o, status)
	}
}

// releaseAfter is the step after the handler of a [core.Concurrency] limit: it
// stops the renewals of the request's lease and gives it back
// ([core.Limiter.Release], which survives the client hanging up), when the
// Outcome holds one. A failed release is reported to the limiter's
// [core.ReleaseObserver]s (SlogObserver logs it) and never turned into a
// response; the lease then expires by its TTL.
func (m *Middleware) releaseAfter(r *http.Request, o Outcome, _ int) {
	if o.Result.Lease != nil {
		o.admission.stop()
		_ = m.limiter.Release(r.Context(), o.Result)
	}
}

// PanicStatus is the status [Middleware.Finish] is given for a handler that
// panicked: written, when the handler wrote a status before it panicked, or
// else 500.
func PanicStatus(written int, wroteHeader bool) int {
	if wroteHeader {
		return written
	}
	return http.StatusInternalServerError
}

// StatusHijacked is the status [Middleware.Finish] gets for a request
// whose handler hijacked the connection (http.Hijacker: a WebSocket, a raw
// protocol) without writing a status through its ResponseWriter first:
// what it sent on the connection is unknown to the middleware. It is 101
// Switching Protocols, the status of an upgrade, which no status-recording
// writer takes for a final status (1xx are interim), so it always means a
// hijack. [FailedRequests] and [SuccessfulRequests] both charge it: a
// handler that answers in raw bytes (a 401 written on the connection) is
// never free under [WithChargeIf]. A handler that writes its status (say
// 200, flushed) before hijacking is counted by that status.
const StatusHijacked = http.StatusSwitchingProtocols

// HijackedStatus is the status [Middleware.Finish] is given for a handler
// that hijacked the connection: written, when it wrote a status before
// hijacking, else [StatusHijacked].
func HijackedStatus(written int, wroteHeader bool) int {
	if wroteHeader {
		return written
	}
	return StatusHijacked
}

// serveFinishing serves next on a status-recording w, then calls Finish,
// also when next panics.
func (m *Middleware) serveFinishing(next http.Handler, w http.ResponseWriter, r *http.Request, o Outcome) {
	sw := &statusWriter{ResponseWriter: w}
	returned := false
	defer func() {
		if !returned { // next panicked; the panic goes on after this
			m.Finish(w, r, o, PanicStatus(sw.status, sw.wrote))
		}
	}()
	next.ServeHTTP(sw, r)
	returned = true
	status := http.StatusOK
	if sw.wrote {
		status = sw.status
	}
	m.Finish(w, r, o, status)
}

// statusWriter records the status of a response. It unwraps
// (http.ResponseController), flushes and hijacks through the writer it
// wraps, so streaming and WebSocket handlers keep working; a hijack
// records the status [HijackedStatus] gives it, which nothing written
// after replaces.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote && code >= 200 { // 1xx are interim
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher when the wrapped writer can flush.
func (w *statusWriter) Flush() {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker when the wrapped writer can hijack.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.status, w.wrote = HijackedStatus(w.status, w.wrote), true
	}
	return conn, rw, err
}
