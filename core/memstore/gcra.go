package memstore

import "github.com/ratelimitkit/ratelimit/core"

// The algorithms below transcribe docs/algorithms.md operation by
// operation, in float64 like the Lua scripts. Every product that is then
// added to or subtracted from is wrapped in float64(...): the Go spec lets
// a compiler fuse x*y + z into one FMA instruction, which rounds once
// instead of twice and would break bit-for-bit agreement with Lua; an
// explicit conversion forbids the fusion. The builtin min and max have the
// results of math.Min and math.Max (NaN, ±0 included) and are compiled
// inline instead of called.

// evalGCRA evaluates GCRA; st.x is the theoretical arrival time (tat).
func evalGCRA(o *outcome, st *state, found bool, l *core.Limit, now, cost int64) {
	t := float64(periodMicros(l.Period)) / float64(l.Rate)
	bt := float64(float64(l.Capacity()) * t)
	n := float64(now)
	tat := n
	if found {
		tat = max(st.x, n)
	}
	left := bt - (tat - n) // tokens before the take
	o.resetBefore = roundUp(tat - n)
	if cost == 0 || cost > l.Capacity() {
		o.remainingBefore = floorTokens(left/t, t)
		o.settle(cost, l.Capacity())
		return
	}
	newTAT := tat + float64(float64(cost)*t)
	allowAt := newTAT - bt
	if allowAt-n > tolerance {
		o.remainingBefore = floorTokens(left/t, t)
		o.deny(roundUp(allowAt - n))
		return
	}
	reset := roundUp(newTAT - n)
	o.admit(floorTokens((bt-(newTAT-n))/t, t), reset, ttlMicros(reset))
	o.tokensBefore(left, t) // needed only if another limit denies the take
	*st = state{x: newTAT}
}
