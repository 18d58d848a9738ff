package memstore

import (
	"math"

	"github.com/ratelimitkit/ratelimit/core"
)

// evalFixedWindow evaluates the fixed window; st.w is the window number,
// st.n its count and st.ts the window length d (µs) they count in (0: the
// limit's period). The counts are integers below 2⁵³, exact in int64 as in
// the scripts' doubles; the window number is floored in float64 as Lua's
// math.floor(now / P) does. When d is not the period, the stored count
// belongs to the window of the period holding the stored window's start,
// w·d (docs/algorithms.md, "When the period changes"). A reading before
// that start is taken as the start (the old window never reopens); the end
// of the window is measured from the reading.
func evalFixedWindow(o *outcome, st *state, found bool, l *core.Limit, now, cost int64) {
	p, r := periodMicros(l.Period), l.Rate
	at := now // the key's time: never before the stored window
	if found {
		d := windowLength(st, p)
		at = max(now, st.w*d)
		if d != p { // the period changed: the window holding the start
			st.w = windowOf(st.w*d, p)
		}
	}
	w := windowOf(at, p)
	countWindow(o, st, found, r, w, (w+1)*p-now, cost)
	st.ts = p // the length the state to write counts in
}

// windowLength is the window length (µs) the stored window state st counts
// in: st.ts, or p, the limit's period, for state that does not say.
func windowLength(st *state, p int64) int64 {
	if st.ts == 0 {
		return p
	}
	return st.ts
}

// countWindow decides a take of cost in the window named id (st.w holds
// the stored window's name, st.n its count), which ends end µs after the
// reading, for a quota of r: the fixed window's and the calendar
// window's common part.
func countWindow(o *outcome, st *state, found bool, r, id, end, cost int64) {
	var n int64
	if found && st.w == id {
		n = st.n
	}
	o.remainingBefore = r - n
	if n > 0 {
		o.resetBefore = end
	}
	if o.settle(cost, r) {
		return
	}
	if n+cost > r {
		o.deny(end)
		return
	}
	o.admit(r-n-cost, end, ttlMicros(end))
	*st = state{w: id, n: n + cost}
}

// windowOf returns floor(now / p), the number of the window holding now.
func windowOf(now, p int64) int64 {
	return int64(math.Floor(float64(now) / float64(p)))
}
