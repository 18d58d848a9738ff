package httplimit

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// OutcomeFromContext returns the [Outcome] of the request whose context is
// ctx, as the innermost [Middleware] that admitted it decided it: its
// Result (tier, decisions, [core.Result.Lease]) for the handler. ok is false
// when no middleware admitted the request (none on its path, or it was
// skipped, [WithSkip]). Every adapter hands its handlers the request
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
type decidedBy struct{ l *core.Limiter }

// An admission is the context of a request a [Middleware] admitted, in one
// allocation: the request's own context, the Result of its Outcome (for
// [OutcomeFromContext]; the rest of an admitted Outcome is zero) and the
// limiter that decided it (so that a second middleware of the same limiter
// on the request's path lets it pass, [Middleware.Decide]); with a lease,
// its renewal too.
type admission struct {
	context.Context
	limiter *core.Limiter
	res     core.Result
	renewal *renewal // nil unless the Result holds a lease
}

// A renewal renews the lease of an admission on a timer until it is
// stopped.
type renewal struct {
	mu      sync.Mutex
	timer   *time.Timer
	every   time.Duration // a third of the shortest lease TTL
	stopped bool
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
		rn := &renewal{every: ls.TTL() / 3}
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

// renew renews the lease of the admission, on its timer, then schedules
// the next renewal, until stop; a lease lost is not renewed again. A
// renewal runs under the request's context without its cancellation (the
// client hanging up does not end the handler) and the limiter's timeout;
// [core.Limiter.Renew] reports it to the limiter's [core.RenewObserver]s
// (nothing when the lease was released meanwhile).
func (a *admission) renew(rn *renewal) {
	ctx := context.WithoutCancel(a)
	err := a.limiter.Renew(ctx, a.res)
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.stopped { // released meanwhile: whatever the renewal said is moot
		return
	}
	if !errors.Is(err, core.ErrLeaseLost) {
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
