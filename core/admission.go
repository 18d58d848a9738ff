package core

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// OutcomeFromContext returns the [Outcome] of the request whose context is
// ctx, as the innermost [Middleware] that admitted it decided it: its
// Result (tier, decisions, [Result.Lease]) for the handler. ok is false
// when no middleware admitted the request (none on its path, or it was
// skipped, [HTTPSkip]). Every adapter hands its handlers the request
// carrying it (gin's c.Request, echo's c.Request(), the *http.Request of
// net/http and chi).
//
// The handler need not renew a lease: the middleware does it while the
// handler runs (see [Middleware]).
func OutcomeFromContext(ctx context.Context) (Outcome, bool) {
	a, ok := ctx.Value(outcomeKey{}).(*admission)
	if !ok {
		return Outcome{}, false
	}
	return Outcome{Result: a.res, admission: a}, true
}

// outcomeKey finds the innermost admission of a context.
type outcomeKey struct{}

// decidedBy finds the admission of a context made by limiter l: a
// pointer-shaped key, so that asking costs no allocation.
type decidedBy struct{ l *Limiter }

// An admission is the context of a request a [Middleware] admitted, in one
// allocation: the request's own context, the Result of its Outcome (for
// [OutcomeFromContext]; the rest of an admitted Outcome is zero) and the
// limiter that decided it (so that a second middleware of the same limiter
// on the request's path lets it pass, [Middleware.Decide]); with a lease,
// its renewal too.
type admission struct {
	context.Context
	limiter *Limiter
	res     Result
	renewal *renewal // nil unless the Result holds a lease
}

// A renewal renews the lease of an admission on a timer until it is
// stopped.
type renewal struct {
	mu      sync.Mutex
	timer   *time.Timer
	every   time.Duration // a third of the shortest lease TTL
	stopped bool
	log     *logSampler // the middleware's
}

// Value answers the keys of the admission and asks the request's context
// for any other.
func (a *admission) Value(key any) any {
	switch k := key.(type) {
	case outcomeKey:
		return a
	case decidedBy:
		if k.l == a.limiter {
			return a
		}
	}
	return a.Context.Value(key)
}

// admit records in o, which is Allowed and not skipped, the admission of
// r: its context, and the renewal of its lease when it holds one.
func (m *Middleware) admit(r *http.Request, o *Outcome) {
	a := &admission{Context: r.Context(), limiter: m.limiter, res: o.Result}
	o.admission = a
	if ls := o.Result.Lease; ls != nil {
		rn := &renewal{every: shortestTTL(ls) / 3, log: m.errLog}
		a.renewal = rn
		rn.mu.Lock()
		defer rn.mu.Unlock()
		rn.timer = time.AfterFunc(rn.every, func() { a.renew(rn) })
	}
}

// request returns r with the admission in its context, or r when there is
// none.
func (a *admission) request(r *http.Request) *http.Request {
	if a == nil {
		return r
	}
	return r.WithContext(a)
}

// shortestTTL returns the shortest lease TTL among the limits of ls.
func shortestTTL(ls *Lease) time.Duration {
	ttl := ls.limits[0].Period
	for _, l := range ls.limits[1:] {
		ttl = min(ttl, l.Period)
	}
	return ttl
}

// renew renews the lease of the admission, on its timer, then schedules
// the next renewal, until stop; a lease lost is not renewed again. A
// renewal runs under the request's context without its cancellation (the
// client hanging up does not end the handler) and the limiter's timeout.
func (a *admission) renew(rn *renewal) {
	ctx := context.WithoutCancel(a)
	err := a.limiter.Renew(ctx, a.res)
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.stopped { // released meanwhile: whatever the renewal said is moot
		return
	}
	a.limiter.renewed(ctx, a.res, err, rn.log)
	if !errors.Is(err, ErrLeaseLost) {
		rn.timer.Reset(rn.every)
	}
}

// stop ends the renewals of the admission's lease, before its release; a
// renewal running meanwhile reports nothing.
func (a *admission) stop() {
	if a == nil || a.renewal == nil {
		return
	}
	rn := a.renewal
	rn.mu.Lock()
	defer rn.mu.Unlock()
	rn.stopped = true
	rn.timer.Stop()
}

// A RenewObserver is an [Observer] that also hears about every renewal of a
// lease the [Middleware] makes while a handler runs: err is nil when the
// store pushed the lease's expiry, [ErrLeaseLost] (wrapped) when the lease
// had expired already (the request runs on without a place, and is not
// renewed again), else why the store could not be asked (it is tried
// again at the next renewal). Like Decided, Renewed runs off the request
// path but must be fast and must not block.
type RenewObserver interface {
	Observer
	// Renewed is called once per renewal, whatever its outcome.
	Renewed(ctx context.Context, res Result, err error)
}

// renewed tells the observers about a renewal of the lease of res, and
// logs a failed one on the middleware's sampled log when no observer
// hears it.
func (l *Limiter) renewed(ctx context.Context, res Result, err error, log *logSampler) {
	heard := false
	for _, o := range l.observers {
		if ro, ok := o.(RenewObserver); ok {
			ro.Renewed(ctx, res, err)
			heard = true
		}
	}
	if err != nil && !heard {
		log.emit(ctx, slog.LevelWarn, "ratelimit: lease not renewed",
			slog.String("tier", res.Tier), slog.String("error", truncated(errorText(err))))
	}
}
