package memstore

import (
	"math"

	"github.com/ratelimitkit/ratelimit/core"
)

// evalSlidingWindow evaluates the sliding window counter; st.w is the
// window number, st.n its count, st.p the count of window w − 1 and st.ts
// the window length d (µs) they count in (0: the limit's period). The
// estimate is computed in float64 like the script: prev·(P − e) can exceed
// 2⁵³ at the largest rates and periods, and must round the same way. When
// d is not the period, each stored count belongs to the window of the
// period holding its window's start (docs/algorithms.md, "When the period
// changes"). A reading before the stored window's start is taken as that
// start, and the durations are then measured from the reading.
func evalSlidingWindow(o *outcome, st *state, found bool, l *core.Limit, now, cost int64) {
	pm := periodMicros(l.Period)
	at := now // the key's time: never before the stored window
	if found {
		at = max(now, st.w*windowLength(st, pm))
	}
	lag := at - now
	w := windowOf(at, pm)
	p, r, c := float64(pm), float64(l.Rate), float64(cost)
	e := float64(at) - float64(float64(w)*p)
	var cur, prev float64
	if found {
		cur, prev = slidingCounts(st, w, pm)
	}
	usedP := float64(prev*(p-e)) + float64(cur*p)
	o.remainingBefore = int64(max(0, math.Floor((float64(r*p)-usedP)/p)))
	switch {
	case cur > 0:
		o.resetBefore = int64(2*p-e) + lag
	case prev > 0:
		o.resetBefore = int64(p-e) + lag
	}
	if o.settle(cost, l.Rate) {
		return
	}
	if usedP+float64(c*p) > float64(r*p) {
		o.deny(slidingRetry(p, r, c, e, cur, prev) + lag)
		return
	}
	cur += c
	after := math.Floor((float64(r*p) - float64(prev*(p-e)) - float64(cur*p)) / p)
	reset := int64(2*p-e) + lag
	o.admit(int64(after), reset, ttlMicros(reset))
	*st = state{w: w, n: int64(cur), p: int64(prev), ts: pm}
}

// slidingCounts returns the counts of the stored state st in window w of
// length p and in window w − 1, where st counts in windows of its own
// length d: each stored count belongs to the window holding its window's
// start.
func slidingCounts(st *state, w, p int64) (cur, prev float64) {
	d := windowLength(st, p)
	if d == p {
		switch st.w {
		case w:
			return float64(st.n), float64(st.p)
		case w - 1:
			return 0, float64(st.n)
		}
		return 0, 0
	}
	for _, c := range [2]struct{ start, n int64 }{{st.w * d, st.n}, {(st.w - 1) * d, st.p}} {
		switch windowOf(c.start, p) {
		case w:
			cur += float64(c.n)
		case w - 1:
			prev += float64(c.n)
		}
	}
	return cur, prev
}

// slidingRetry is the wait until a denied cost c fits the sliding window
// estimate: within the current window while the previous one's weight
// decays, or else into the next window, as cur's weight decays.
//
// The admission test of the counter has no tolerance, so the wait is
// rounded up to the whole µs (ceil, at least 1), not to the nearest as
// roundUp would: a wait 0.4 µs short would be denied again, with a
// RetryAfter of 0. The first wait needs prev > 0: beyond 2⁵³ (R·P) the
// rounding of the estimate may deny cur + c ≤ R with prev = 0, where it
// would divide 0 by 0 (and Go's max keeps a NaN that Lua's math.max
// drops).
func slidingRetry(p, r, c, e, cur, prev float64) int64 {
	if cur+c <= r && prev > 0 {
		return ceilMicros(p - e - (r-cur-c)*p/prev)
	}
	return ceilMicros((p - e) + p - (r-c)*p/cur)
}

// ceilMicros rounds a positive wait in µs up to whole µs, at least 1.
func ceilMicros(x float64) int64 {
	return int64(max(1, math.Ceil(x)))
}
