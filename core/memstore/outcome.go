package memstore

import (
	"slices"

	"github.com/ratelimitkit/ratelimit/core"
)

// An outcome is what one algorithm said about one limit at one instant,
// before the store decides whether the take as a whole is admitted. Times
// are whole microseconds.
type outcome struct {
	allowed bool
	reason  core.Reason
	// remaining and reset before the charge, and after it (used when the
	// whole take is admitted).
	remainingBefore, remainingAfter int64
	resetBefore, resetAfter         int64
	retry                           int64
	// ttl is how long the written state lives (when it is written).
	ttl int64
	// lazy is set when remainingBefore is still to be computed, as
	// floorTokens(left/interval, interval), from GCRA's tokens before an
	// admitted charge: a division and a floor that only a take denied by
	// another of its limits needs.
	lazy           bool
	left, interval float64
}

// tokensBefore defers remainingBefore (see lazy).
func (o *outcome) tokensBefore(left, interval float64) {
	o.lazy, o.left, o.interval = true, left, interval
}

// settle handles the cases that need no more arithmetic once the before
// values are known: a cost above the capacity (denied, CostTooHigh, no
// wait helps) and a peek (cost 0: allowed, nothing changes). It reports
// whether the outcome is final.
func (o *outcome) settle(cost, capacity int64) bool {
	o.remainingAfter, o.resetAfter = o.remainingBefore, o.resetBefore
	switch {
	case cost > capacity:
		o.reason = core.CostTooHigh
		return true
	case cost == 0:
		o.allowed = true
		return true
	}
	return false
}

// admit records an admitted charge.
func (o *outcome) admit(remaining, reset, ttl int64) {
	o.allowed = true
	o.remainingAfter, o.resetAfter, o.ttl = remaining, reset, ttl
}

// deny records an exhausted limit that a wait of retry µs would satisfy.
func (o *outcome) deny(retry int64) {
	o.reason, o.retry = core.Exhausted, retry
}

// appendDecision appends the [core.Decision] of limit l to dst, with the
// after-charge values when the whole take was admitted and the
// before-charge ones otherwise. It writes the decision in place, field by
// field: a Decision is 104 bytes, and a composite literal would be built
// beside dst, then copied, a measurable part of a take.
func (o *outcome) appendDecision(dst []core.Decision, l *core.Limit, admitted bool) []core.Decision {
	remaining, reset := o.remainingBefore, o.resetBefore
	switch {
	case admitted:
		remaining, reset = o.remainingAfter, o.resetAfter
	case o.lazy:
		remaining = floorTokens(o.left/o.interval, o.interval)
	}
	dst = slices.Grow(dst, 1)[:len(dst)+1]
	d := &dst[len(dst)-1]
	*d = core.Decision{} // a field added to Decision is zero, not left over
	d.Limit = *l
	d.Allowed, d.Reason = o.allowed, o.reason
	d.Remaining = max(0, remaining)
	d.ResetAfter, d.RetryAfter = micros(reset), micros(o.retry)
	return dst
}
