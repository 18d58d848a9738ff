package httplimit

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
)

// A FinishFunc runs after the handler of a request the [Middleware] let
// through has returned, with the request's [Outcome] and the response's
// status ([Middleware.Serve]).
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

// Finishes reports whether m has work after the handler for
// [Middleware.Serve] to run: [WithFinish], [WithChargeIf], a
// [core.Concurrency] limit in a tier of the limiter. An adapter that
// wraps its framework's writer to see a hijack does so only when it does,
// so the common path costs nothing.
func (m *Middleware) Finishes() bool { return len(m.after) > 0 }

// Serve is the whole life of request r under m, the one entry of every
// framework adapter: it decides r ([Middleware.Decide]; route is the
// route template the framework matched), and when r is allowed it runs
// next with the request that carries its [Outcome] ([OutcomeFromContext])
// and then finishes it: the release of its lease, the charge of
// [WithChargeIf], the [WithFinish] func, with the response's final status,
// also when next panics (they run, then the panic goes on). When r is not
// allowed, next does not run: the adapter stops its chain, with
// [Middleware.Deny] or its framework's own rendering of [Outcome.Status].
//
// status reads the response's status after next: its code (200 when the
// handler set none; [HijackedStatus] for a handler that hijacked the
// connection) and whether it was written to the client. After next
// returns, the code is final; after a panic, a code not written yet is
// 500, what a recovering middleware answers ([WithFinish]). A nil status
// means next
// writes through the writer it gets, which Serve then wraps to record the
// status (it keeps http.Flusher, http.Hijacker and
// http.ResponseController working); with a status func, or when m has no
// work after the handler ([Middleware.Finishes]), next gets w as is. A
// request the same limiter admitted before runs next and finishes nothing.
func (m *Middleware) Serve(w http.ResponseWriter, r *http.Request, route string,
	next func(http.ResponseWriter, *http.Request), status func() (code int, written bool)) Outcome {
	var o Outcome
	m.decide(w, r, route, &o)
	switch {
	case !o.allowed():
		return o
	case m.after == nil || o.again:
		next(w, o.admission.request(r))
		return o
	}
	r = o.admission.request(r)
	if status == nil {
		sw := &statusWriter{ResponseWriter: w}
		w, status = sw, sw.written
	}
	returned := false
	defer func() {
		if !returned { // next panicked; the panic goes on after this
			m.runAfter(r, o, panicStatus(status()))
		}
	}()
	next(w, r)
	returned = true
	code, _ := status()
	m.runAfter(r, o, code)
	return o
}

// runAfter runs the steps after the handler of a request Decide allowed, in
// order: the release of the request's lease ([core.Limiter.Release]), the
// charge of [WithChargeIf], then the [WithFinish] func. It does nothing
// for a request the same limiter had admitted before: its first
// middleware finishes it.
func (m *Middleware) runAfter(r *http.Request, o Outcome, status int) {
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

// panicStatus is the final status of a handler that panicked: written,
// when the handler wrote a status before it panicked, or else 500.
func panicStatus(written int, wroteHeader bool) int {
	if wroteHeader {
		return written
	}
	return http.StatusInternalServerError
}

// StatusHijacked is the status [Middleware.Serve] gets for a request
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

// HijackedStatus is the status [Middleware.Serve] is given for a handler
// that hijacked the connection: written, when it wrote a status before
// hijacking, else [StatusHijacked].
func HijackedStatus(written int, wroteHeader bool) int {
	if wroteHeader {
		return written
	}
	return StatusHijacked
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

// written returns the status w recorded (200 when none), and whether one
// was written.
func (w *statusWriter) written() (int, bool) {
	if !w.wrote {
		return http.StatusOK, false
	}
	return w.status, true
}
