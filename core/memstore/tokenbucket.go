package memstore

import "github.com/ratelimitkit/ratelimit/core"

// evalTokenBucket evaluates the token bucket; st.x is tk, st.ts is ts.
// Unlike the max(0, tokens − c) of docs/algorithms.md, an admitted take
// keeps a debt below 0.5/T tokens (see below).
func evalTokenBucket(o *outcome, st *state, found bool, l core.Limit, now, cost int64) {
	t := float64(periodMicros(l.Period)) / float64(l.Rate)
	b := float64(l.Capacity())
	n := float64(now)
	tokens, ts := b, n
	if found {
		tokens, ts = st.x, float64(st.ts)
	}
	tokens = min(b, tokens+max(0, n-ts)/t)
	o.remainingBefore = floorTokens(tokens, t)
	o.resetBefore = roundUp((b - tokens) * t)
	if o.settle(cost, l.Capacity()) {
		return
	}
	c := float64(cost)
	if (c-tokens)*t > tolerance {
		o.deny(roundUp((c - tokens) * t))
		return
	}
	// A take admitted within the tolerance leaves a debt of less than
	// 0.5 µs of tokens: it is kept, as GCRA keeps it in tat, so that the two
	// stay one machine (core/storetest holds the stores to that).
	left := tokens - c
	reset := roundUp((b - left) * t)
	o.admit(floorTokens(left, t), reset, ttlMicros(reset))
	*st = state{x: left, ts: now}
}
