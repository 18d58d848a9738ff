package core

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
)

// A ChargeFunc reports, from the final status of the response, whether a
// request is charged ([HTTPChargeIf]).
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

// HTTPChargeIf charges a request after its handler, and only when
// charge(status) is true for the final status of its response (the status
// [HTTPFinish] gets: 200 when the handler wrote nothing, 500 when it
// panicked before writing, [StatusHijacked] when it hijacked the
// connection before writing a status). [FailedRequests] counts only
// failures (a login guard: 5 failed logins a minute, successful ones never
// counted); [SuccessfulRequests] only successes.
//
// Before the handler the request is checked, not charged: it is denied,
// as any denial (429, Retry-After, the [DenyHandler]), when its cost would
// not fit every limit of its tier now, that is when some limit has fewer
// than cost requests Remaining (a peek of the store, cost 0, charges
// nothing), and the deny cache ([WithDenyCache]) answers for a client it
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
// to count it, [FailLocal]) is logged on slog's default logger at Warn,
// sampled, never turned into a response. Observers
// ([WithObserver]) see one decision per request, its check; the charge is
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
// its handler, as without HTTPChargeIf, and not again after it.
//
// A cost of 0 ([HTTPCost](0)) together with HTTPChargeIf is an error: it
// would charge nothing whatever the outcome. So is a limiter with a
// [Concurrency] limit in a tier: a check takes no lease. A [CostFunc] returning 0 at
// request time makes a free request, checked and never charged
// ([HTTPCostFunc]). Skipped requests
// ([HTTPSkip]) are neither checked nor charged. In shadow mode
// ([WithShadow]) a check that would deny is shadowed, like a denial, and
// the request runs.
//
// The charge is work after the handler: every adapter runs it through
// [Middleware.Finish], before the [HTTPFinish] func.
func HTTPChargeIf(charge ChargeFunc) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPChargeIf"); err != nil {
			return err
		}
		if charge == nil {
			return fmt.Errorf("ratelimit: HTTPChargeIf: charge func must not be nil")
		}
		m.chargeIf = charge
		return nil
	}
}

// checkCharge fails on options that contradict [HTTPChargeIf].
func (m *Middleware) checkCharge() error {
	if m.chargeIf == nil {
		return nil
	}
	if m.given["HTTPCost(0)"] {
		return fmt.Errorf("ratelimit: HTTPChargeIf and HTTPCost(0) contradict each other: a cost of 0 is never charged, whatever the outcome")
	}
	if tier, limit, ok := m.limiter.leasedLimit(); ok {
		return fmt.Errorf("ratelimit: HTTPChargeIf and the Concurrency limit %q of tier %q contradict each other: a request checked before its handler holds no lease, so nothing counts it in flight", limit, tier)
	}
	return nil
}

// check decides req before its handler for [HTTPChargeIf] into res, the
// Result of its check, and returns the request to charge after the
// handler (Cost 0 when there is nothing to charge: a peek, or a request
// the check charged).
func (m *Middleware) check(ctx context.Context, req Request, res *Result) (Request, error) {
	charged, err := m.limiter.check(ctx, req, res)
	if err != nil || charged || !res.Allowed {
		req.Cost = 0
	}
	req.Tier, req.TierKey = res.Tier, "" // the tier the check applied: no second lookup
	return req, err
}

// chargeAfter is the step after the handler of [HTTPChargeIf].
func (m *Middleware) chargeAfter(r *http.Request, o Outcome, status int) {
	if o.charge.Cost == 0 || !m.chargeIf(status) {
		return
	}
	ctx := context.WithoutCancel(r.Context())
	var res Result
	err := m.limiter.charge(ctx, o.charge, &res)
	if err == nil && res.Degraded && !res.Fallback { // a fallback's charge counted, locally
		err = res.Err
	}
	if err != nil {
		m.errLog.emit(ctx, slog.LevelWarn, "ratelimit: charge after the handler failed",
			slog.String("method", truncated(r.Method)), slog.String("path", truncated(r.URL.Path)),
			slog.Int("status", status), slog.String("error", truncated(errorText(err))))
	}
}

// check decides whether req.Cost would fit every limit of its tier now,
// without charging it, into res (see [HTTPChargeIf]): a cached denial, or
// else a peek of the store, admitted when every limit has at least Cost
// Remaining. When the peek says the cost does not fit, the store decides
// by a take, which then denies (and fills the deny cache) as for any
// request, or, when the quota refilled since the peek, admits and charges:
// charged reports that. Observers see the outcome as the request's
// decision.
func (l *Limiter) check(ctx context.Context, req Request, res *Result) (charged bool, err error) {
	if req.Cost <= 0 {
		return false, l.takeInto(ctx, &req, res) // a peek, or ErrInvalidCost
	}
	if err := ctx.Err(); err != nil {
		return false, callerGone(err)
	}
	p, tierErr := l.plan(ctx, &req)
	if charged, err = l.checkTake(ctx, req, p, res); err != nil {
		*res = Result{}
		return false, err
	}
	l.decided(ctx, &req, p, tierErr, res)
	return charged, nil
}

// checkTake is the store side of [Limiter.check], under plan p.
func (l *Limiter) checkTake(ctx context.Context, req Request, p *plan, res *Result) (charged bool, err error) {
	id := SafeIdentity(req.Identity)
	if req.Cost > p.fits { // a take is denied, CostTooHigh: it charges nothing
		return false, l.takeStore(ctx, id, req.Cost, p, res)
	}
	if l.denied != nil && l.denied.holds(denyKey{identity: id, tier: p.name}, req.Cost, l.now, res) {
		return false, nil
	}
	if err := l.takeStore(ctx, id, 0, p, res); err != nil {
		return false, err
	}
	if !res.Allowed || fits(res, req.Cost) {
		return false, nil
	}
	*res = Result{}
	if err := l.take(ctx, &req, p, res); err != nil {
		return false, err
	}
	return res.Allowed && (!res.Degraded || res.Fallback), nil
}

// fits reports whether every limit of the peek res has cost Remaining.
func fits(res *Result, cost int64) bool {
	for i := range res.Len() {
		if res.verdict(i).remaining < cost {
			return false
		}
	}
	return true
}

// charge takes req after its handler ([HTTPChargeIf]) into res: a take
// like [Limiter.Take], deny cache included, that no observer sees.
func (l *Limiter) charge(ctx context.Context, req Request, res *Result) error {
	p, _ := l.plan(ctx, &req)
	if err := l.take(ctx, &req, p, res); err != nil {
		*res = Result{}
		return err
	}
	return nil
}
