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
)

// String returns "not_denied", "exhausted", "cost_too_high" or
// "unavailable".
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
// the client's tier, taken together.
type Result struct {
	// Allowed is true when every limit admitted the request (and each was
	// charged), false when at least one denied it (and none was charged).
	Allowed bool
	// Decisions holds one decision per limit of the tier, in tier order.
	Decisions []Decision
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

	policy []string // the tier's RateLimit-Policy field, set by the Limiter
}

// Binding returns the decision that binds: among denying limits the one
// with the longest RetryAfter; when all admit, the one with the fewest
// Remaining (ties go to the longest ResetAfter). Binding of a Result with
// no decisions is the zero Decision.
func (r Result) Binding() Decision {
	if len(r.Decisions) == 0 {
		return Decision{}
	}
	return r.Decisions[bindingIndex(r.Decisions)]
}

func bindingIndex(ds []Decision) int {
	best := 0
	for i := 1; i < len(ds); i++ {
		if moreBinding(ds[i], ds[best]) {
			best = i
		}
	}
	return best
}

// moreBinding reports whether a is more restrictive than b.
func moreBinding(a, b Decision) bool {
	if a.Allowed != b.Allowed {
		return !a.Allowed
	}
	if !a.Allowed {
		if a.Reason != b.Reason {
			return a.Reason == CostTooHigh
		}
		return a.RetryAfter > b.RetryAfter
	}
	if a.Remaining != b.Remaining {
		return a.Remaining < b.Remaining
	}
	return a.ResetAfter > b.ResetAfter
}
