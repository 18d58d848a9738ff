package httplimit

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/ratelimitkit/ratelimit/internal/logsample"
)

// A ChargeFunc reports, from the final status of the response, whether a
// request is charged ([WithChargeIf]).
type ChargeFunc = func(status int) bool

// FailedRequests is the [ChargeFunc] of a login guard: it charges the
// responses with status 400 or above (401 Unauthorized, 403, but also a
// 500 or a handler that panicked), so only failed attempts count, and a
// hijacked connection whose status is unknown ([StatusHijacked]).
func FailedRequests(status int) bool { return status >= 400 || status == StatusHijacked }

// SuccessfulRequests is the [ChargeFunc] that charges the responses with a
// status below 400, so errors (a validation failure, an outage of the
// backend) cost the client nothing. A hijacked connection
// ([StatusHijacked], 101) is charged.
func SuccessfulRequests(status int) bool { return status < 400 }

// WithChargeIf charges a request after its handler, and only when
// charge(status) is true for the final status of its response (the status
// [WithFinish] gets: 200 when the handler wrote nothing, 500 when it
// panicked before writing, [StatusHijacked] when it hijacked the
// connection before writing a status). [FailedRequests] counts only
// failures (a login guard: 5 failed logins a minute, successful ones never
// counted); [SuccessfulRequests] only successes.
//
// Before the handler the request is checked, not charged: it is denied,
// as any denial (429, Retry-After, the [DenyHandler]), when its cost would
// not fit every limit of its tier now, that is when some limit has fewer
// than cost requests Remaining (a peek of the store, cost 0, charges
// nothing), and the deny cache ([core.WithDenyCache]) answers for a client it
// holds as denied, without the store. The rate-limit fields of an admitted
// response come from that check: they show the quota before the request's
// own charge, which is not known yet when the headers go out.
//
// After the handler, a request charge approves is taken like any other
// (the store admits it when it still fits, else denies it and writes
// nothing, and that denial fills the deny cache), under a context that
// survives the client hanging up (context.WithoutCancel of the request's)
// and the limiter's timeout. The response is already written: a charge
// that failed (an error, or the store unavailable and no fallback store
// to count it, [core.FailLocal]) is logged on slog's default logger at Warn,
// sampled, never turned into a response. Observers
// ([core.WithObserver]) see one decision per request, its check; the charge is
// not a decision.
//
// The bound, exactly: a check is a read, so requests of one client in
// flight at once may all pass the check before any is charged. With a
// quota of L and K requests of one client in flight together, at most
// L-1+K of them run their handler while the quota lasts (L-1 charged
// before, the K checked together); the store never counts beyond L, and
// the next request after them is denied. Sequential requests are exact: a
// client that has spent its quota is denied before the handler. Rarely,
// when the check finds the quota spent but the store admits the request
// an instant later (a refill just then), the request is charged before
// its handler, as without WithChargeIf, and not again after it.
//
// A cost of 0 ([WithCost](0)) together with WithChargeIf is an error: it
// would charge nothing whatever the outcome. So is a limiter with a
// [core.Concurrency] limit in a tier: a check takes no lease. A [CostFunc] returning 0 at
// request time makes a free request, checked and never charged
// ([WithCostFunc]). Skipped requests
// ([WithSkip]) are neither checked nor charged. In shadow mode
// ([core.WithShadow]) a check that would deny is shadowed, like a denial, and
// the request runs.
//
// The charge is work after the handler: [Middleware.Serve] runs it,
// before the [WithFinish] func.
func WithChargeIf(charge ChargeFunc) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithChargeIf"); err != nil {
			return err
		}
		if charge == nil {
			return fmt.Errorf("ratelimit: WithChargeIf: charge func must not be nil")
		}
		m.chargeIf = charge
		return nil
	}
}

// checkCharge fails on options that contradict [WithChargeIf].
func (m *Middleware) checkCharge() error {
	if m.chargeIf == nil {
		return nil
	}
	if m.given["WithCost(0)"] {
		return fmt.Errorf("ratelimit: WithChargeIf and WithCost(0) contradict each other: a cost of 0 is never charged, whatever the outcome")
	}
	if tier, limit, ok := m.limiter.ConcurrencyLimit(); ok {
		return fmt.Errorf("ratelimit: WithChargeIf and the Concurrency limit %q of tier %q contradict each other: a request checked before its handler holds no lease, so nothing counts it in flight", limit, tier)
	}
	return nil
}

// chargeAfter is the step after the handler of [WithChargeIf].
func (m *Middleware) chargeAfter(r *http.Request, o Outcome, status int) {
	if o.charge.Cost == 0 || !m.chargeIf(status) {
		return
	}
	ctx := context.WithoutCancel(r.Context())
	res, err := m.limiter.Charge(ctx, o.charge)
	if err == nil && res.Degraded && !res.Fallback { // a fallback's charge counted, locally
		err = res.Err
	}
	if err != nil {
		m.errLog.Emit(ctx, slog.LevelWarn, "ratelimit: charge after the handler failed",
			slog.String("method", logsample.Truncated(r.Method)), slog.String("path", logsample.Truncated(r.URL.Path)),
			slog.Int("status", status), slog.String("error", logsample.ErrorText(err)))
	}
}
