package core

import "time"

// Reason says why a [Decision] denied a request. The zero value, [NotDenied],
// belongs to decisions that admitted it.
type Reason uint8

const (
	// NotDenied: the limit admits the request.
	NotDenied Reason = iota
	// Exhausted: not enough quota now; RetryAfter says when there will be.
	Exhausted
	// CostTooHigh: the cost is larger than the limit's capacity, so no
	// amount of waiting admits it. RetryAfter is zero.
	CostTooHigh
	// Unavailable: the store could not be asked and the limiter fails
	// closed ([FailClosed]); nothing is known about the quota. RetryAfter
	// is an estimate of when to try again (1 s), not a quota's wait.
	Unavailable
	// Blocked: an operator blocked the client ([Limiter.Block]) until
	// RetryAfter has passed. No store call was made.
	Blocked
	// LockedOut: the limit's [Lockout] locked the client out after
	// repeated denials; RetryAfter is when the lockout ends.
	LockedOut
)

// String returns "not_denied", "exhausted", "cost_too_high",
// "unavailable", "blocked" or "locked_out".
func (r Reason) String() string {
	switch r {
	case NotDenied:
		return "not_denied"
	case Exhausted:
		return "exhausted"
	case CostTooHigh:
		return "cost_too_high"
	case Unavailable:
		return "unavailable"
	case Blocked:
		return "blocked"
	case LockedOut:
		return "locked_out"
	}
	return "unknown"
}

// A Decision is what one [Limit] said about one request. The meaning of each
// field, per algorithm, is in docs/algorithms.md; in short:
//
//   - Allowed: this limit admits the request. When several limits are taken
//     together and another one denies, nothing is charged, but this
//     limit's Allowed still says whether it alone would have admitted it.
//   - Remaining: whole requests of cost 1 that would still pass now, after
//     this request was charged (if it was); never negative.
//   - ResetAfter: time until the limit is back to its full quota if no more
//     requests arrive; zero when it is full.
//   - RetryAfter: zero when allowed; otherwise the exact wait until a request
//     of the same cost would pass this limit, if no other requests arrive.
//     Zero also when Reason is CostTooHigh (waiting never helps).
//
// For a [Concurrency] limit, Remaining is the leases still free (Rate minus
// the requests in flight, [Decision.InFlight]), ResetAfter the time until
// the newest lease expires, and RetryAfter an estimate: the time until the
// oldest lease expires, at most [ConcurrencyRetryAfter] (leases are
// usually released sooner).
type Decision struct {
	Limit      Limit
	Allowed    bool
	Reason     Reason
	Remaining  int64
	ResetAfter time.Duration
	RetryAfter time.Duration
}

// InFlight returns the requests in flight that a [Concurrency] limit saw,
// this one included when it took a lease: Rate − Remaining. It is zero for
// other algorithms. A Rate lowered below the leases in flight reads as
// Rate (Remaining is never negative).
func (d Decision) InFlight() int64 {
	if !d.Limit.Algorithm.leased() {
		return 0
	}
	return max(0, d.Limit.Rate-d.Remaining)
}

// A Result is the outcome of one request: the decision of every limit of
// the client's tier, taken together. [Result.Len] and [Result.Decision]
// read the decisions, in tier order, without allocating; a Result holds up
// to four of them inline, so a decision over the memory store for a client
// that has state allocates nothing. Build one with [NewResult] (tests of
// observers and deny handlers); a [Limiter] makes its own.
type Result struct {
	// Allowed is true when every limit admitted the request (and each was
	// charged), false when at least one denied it (and none was charged).
	Allowed bool
	// Tier is the name of the tier whose limits were applied.
	Tier string
	// TierErr is the error of the tier resolver, if it failed; the default
	// tier was applied instead.
	TierErr error
	// Degraded is set when the decision did not come from the store: the
	// store failed and the limiter's [FailureMode] decided Allowed.
	Degraded bool
	// Fallback is set on a degraded Result whose decisions came from the
	// fallback store ([FailLocal]): real, if local, decisions, which
	// headers and denials report like the store's.
	Fallback bool
	// Exempt is set when the client is exempt ([Limiter.Exempt]): admitted
	// without a store call, its decisions reporting full quotas.
	Exempt bool
	// Overridden is set when the client's own limits applied
	// ([Limiter.SetOverride]) instead of its tier's.
	Overridden bool
	// Shadowed is set in shadow mode ([WithShadow]) when the limits denied
	// the request but it was admitted anyway.
	Shadowed bool
	// Err is the store error behind a degraded Result. It is for logs and
	// metrics; never show its text to a client.
	Err error
	// Lease is what an admitted request holds on the [Concurrency] limits
	// of its tier; give it back with [Limiter.Release] when the request
	// ends. It is nil when the tier has no Concurrency limit and when
	// nothing was taken: a denial, a peek, a shadowed denial, or a
	// degraded Result that failed open (concurrency is then not
	// enforced; with [FailLocal] the fallback store holds the lease).
	Lease *Lease

	limits []Limit                 // one per decision; a Limiter's are its tier's, shared
	inline [inlineVerdicts]verdict // the verdicts, when there are at most inlineVerdicts
	spill  []verdict               // else all of them
}

// inlineVerdicts is how many decisions a [Result] holds without
// allocating: tiers rarely have more limits than that.
const inlineVerdicts = 4

// A verdict is a [Decision] without its Limit, which a [Result] keeps
// apart: a Limiter's Results share their tier's limits, and a Result
// stays small to copy.
type verdict struct {
	allowed    bool
	reason     Reason
	remaining  int64
	resetAfter time.Duration
	retryAfter time.Duration
}

// NewResult returns a Result holding a copy of decisions, Allowed when
// every one of them allows (also when there is none). It is for code that
// tests what consumes Results: observers, deny handlers, header writers.
func NewResult(decisions ...Decision) Result {
	limits := make([]Limit, len(decisions))
	for i, d := range decisions {
		limits[i] = d.Limit
	}
	return resultOf(limits, decisions)
}

// resultOf returns the Result of decisions ds, ds[i] being the decision of
// limits[i]; it keeps limits, not ds, which may be reused once it returns.
func resultOf(limits []Limit, ds []Decision) Result {
	var r Result
	r.set(limits, ds)
	return r
}

// set makes r the Result of decisions ds, as [resultOf] does, in place;
// r is the zero Result.
func (r *Result) set(limits []Limit, ds []Decision) {
	r.Allowed, r.limits = true, limits[:len(ds)]
	vs := r.inline[:]
	if len(ds) > inlineVerdicts {
		r.spill = make([]verdict, len(ds))
		vs = r.spill
	}
	for i := range ds {
		d := &ds[i]
		vs[i] = verdict{allowed: d.Allowed, reason: d.Reason, remaining: d.Remaining, resetAfter: d.ResetAfter, retryAfter: d.RetryAfter}
		r.Allowed = r.Allowed && d.Allowed
	}
}

// Len returns the number of decisions: one per limit of the tier.
func (r Result) Len() int { return len(r.limits) }

// Decision returns the decision of the i-th limit of the tier. Like a slice
// index, it panics if i is not in [0, Len()).
func (r Result) Decision(i int) Decision { return r.decision(i) }

// decision is [Result.Decision], without copying r.
func (r *Result) decision(i int) Decision {
	v := r.verdict(i)
	return Decision{Limit: r.limits[i], Allowed: v.allowed, Reason: v.reason,
		Remaining: v.remaining, ResetAfter: v.resetAfter, RetryAfter: v.retryAfter}
}

// Decisions returns the decisions in a new slice, one per limit of the
// tier. It allocates; [Result.Len] and [Result.Decision] do not.
func (r Result) Decisions() []Decision {
	ds := make([]Decision, r.Len())
	for i := range ds {
		ds[i] = r.Decision(i)
	}
	return ds
}

// verdict returns the i-th verdict, with the bounds check of a slice of
// Len verdicts.
func (r *Result) verdict(i int) *verdict {
	if r.spill != nil {
		return &r.spill[i]
	}
	return &r.inline[:len(r.limits)][i]
}

// Binding returns the decision that binds: among denying limits the one
// with the longest RetryAfter; when all admit, the one with the fewest
// Remaining (ties go to the longest ResetAfter). Binding of a Result with
// no decisions is the zero Decision.
func (r Result) Binding() Decision { return r.binding() }

// binding is [Result.Binding], without copying r.
func (r *Result) binding() Decision {
	if r.Len() == 0 {
		return Decision{}
	}
	return r.decision(r.bindingIndex())
}

// BindingIndex returns the index of the binding decision ([Result.Binding])
// among the decisions of r, or -1 when r has none. A front end that
// caches what it formats per limit of a tier (the httplimit middleware's
// rate-limit fields) finds the binding limit's entry by it.
func (r Result) BindingIndex() int {
	if r.Len() == 0 {
		return -1
	}
	return r.bindingIndex()
}

// bindingIndex returns the index of the binding decision of r, which has
// at least one.
func (r *Result) bindingIndex() int {
	best := 0
	for i := 1; i < r.Len(); i++ {
		if moreBinding(r.verdict(i), r.verdict(best)) {
			best = i
		}
	}
	return best
}

// moreBinding reports whether a is more restrictive than b.
func moreBinding(a, b *verdict) bool {
	if a.allowed != b.allowed {
		return !a.allowed
	}
	if !a.allowed {
		if a.reason != b.reason {
			return a.reason == CostTooHigh
		}
		return a.retryAfter > b.retryAfter
	}
	if a.remaining != b.remaining {
		return a.remaining < b.remaining
	}
	return a.resetAfter > b.resetAfter
}
