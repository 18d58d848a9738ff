package memstore

import "github.com/ratelimitkit/ratelimit/core"

// evalTokenBucket evaluates the token bucket; st.x is tk, st.ts is ts.
// Unlike the max(0, tokens − c) of docs/algorithms.md, an admitted take
// keeps a debt below 0.5/T tokens (see below). A reading before ts is
// taken as ts, and the durations are then measured from the reading.
func evalTokenBucket(o *outcome, st *state, found bool, l *core.Limit, now, cost int64) {
	t := float64(periodMicros(l.Period)) / float64(l.Rate)
	b := float64(l.Capacity())
	at := now // the key's time: never before ts
	tokens := b
	if found {
		at = max(now, st.ts)
		tokens = min(b, st.x+float64(at-st.ts)/t)
	}
	lag := at - now
	o.remainingBefore = floorTokens(tokens, t)
	o.resetBefore = fromReading(roundUp((b-tokens)*t), lag)
	if o.settle(cost, l.Capacity()) {
		return
	}
	c := float64(cost)
	if (c-tokens)*t > tolerance {
		o.deny(roundUp((c-tokens)*t) + lag)
		return
	}
	// A take admitted within the tolerance leaves a debt of less than
	// 0.5 µs of tokens: it is kept, as GCRA keeps it in tat, so that the two
	// stay one machine (core/storetest holds the stores to that).
	left := tokens - c
	reset := roundUp((b-left)*t) + lag
	o.admit(floorTokens(left, t), reset, ttlMicros(reset))
	*st = state{x: left, ts: at}
}
