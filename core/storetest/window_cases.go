package storetest

import (
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// fixedWindowTests are the tables of the fixed window. Windows are
// aligned to the epoch and Start is a boundary, so an offset's remainder
// modulo Period is the time elapsed in its window; end is the time left.
func fixedWindowTests() []sequence {
	fiveIn10s := core.Limit{Rate: 5, Period: 10 * sec, Algorithm: core.FixedWindow}
	return []sequence{
		{
			name:   "5 per 10s: count, cost above 1, the window edge",
			limits: []core.Limit{fiveIn10s},
			steps: []step{
				take(0, 1, ok(4, 10*sec)),
				take(2*sec, 3, ok(1, 8*sec)),
				// n = 4: cost 2 would make 6; the window ends in 6s.
				take(4*sec, 2, denied(1, 6*sec, 6*sec)),
				take(4*sec, 1, ok(0, 6*sec)),
				take(10*sec-us, 1, denied(0, us, us)),
				// A new window: full, nothing to reset.
				take(10*sec, 0, ok(5, 0)),
				take(10*sec, 5, ok(0, 10*sec)),
				take(19*sec, 1, denied(0, sec, sec)),
				// Window [20s, 30s) is fresh: cost 6 > Rate 5.
				take(25*sec, 6, tooHigh(5, 0)),
				take(25*sec, 5, ok(0, 5*sec)),
				take(25*sec, 6, tooHigh(0, 5*sec)),
			},
		},
		{
			name:   "5 per 10s: twice the Rate passes across a window boundary",
			limits: []core.Limit{fiveIn10s},
			steps: []step{
				take(9*sec, 5, ok(0, sec)),
				take(10*sec-us, 1, denied(0, us, us)),
				// 10 requests admitted between 9s and 10s: 2 × Rate within
				// one second, as documented.
				take(10*sec, 5, ok(0, 10*sec)),
				take(20*sec-us, 1, denied(0, us, us)),
				take(20*sec, 0, ok(5, 0)),
			},
		},
		{
			// Start is 2025-01-01T00:00:00Z, a day boundary.
			name:   "1000 per day: the window resets at midnight UTC",
			limits: []core.Limit{core.PerDay(1000).WithAlgorithm(core.FixedWindow)},
			steps: []step{
				take(23*hour, 1000, ok(0, hour)),
				take(24*hour-us, 1, denied(0, us, us)),
				take(24*hour, 1, ok(999, 24*hour)),
			},
		},
	}
}

// slidingWindowTests are the tables of the sliding window counter. With
// P the period in µs, e the time elapsed in the current window, cur and
// prev the counts of the current and previous window, the estimate is
// used·P = prev·(P − e) + cur·P and a take of cost c passes when
// used·P + c·P ≤ R·P. RetryAfter is the whole µs at which it would pass:
//
//   - cur + c ≤ R: later in this window, as prev's weight decays:
//     ceil((prev·(P − e) + (cur + c − R)·P) / prev);
//   - otherwise in the next window, where cur becomes prev:
//     (P − e) + ceil((cur + c − R)·P / cur).
//
// docs/algorithms.md writes these with roundUp, which rounds to the nearest
// µs; since the test itself is exact, a wait rounded down would be denied
// again, so these tables expect the ceiling (see the package doc).
func slidingWindowTests() []sequence {
	tenPerMinute := core.PerMinute(10).WithAlgorithm(core.SlidingWindow)
	threeIn10s := core.Limit{Rate: 3, Period: 10 * sec, Algorithm: core.SlidingWindow}
	fiveIn10s := core.Limit{Rate: 5, Period: 10 * sec, Algorithm: core.SlidingWindow}
	return []sequence{
		{
			// P = 60s, R = 10.
			name:   "10 per minute: the previous window weighted by its overlap",
			limits: []core.Limit{tenPerMinute},
			steps: []step{
				// Reset while cur > 0 is 2P − e: cur's weight is gone then.
				take(0, 4, ok(6, 2*minute)),
				take(50*sec, 6, ok(0, 70*sec)),
				// cur + c = 11 > R: into the next window, where
				// 10·(P − e'') + 1·P ≤ 10·P at e'' = 6s; 1µs + 6s away.
				take(minute-us, 1, denied(0, minute+us, 6*sec+us)),
				// Window 1 at e = 0: prev = 10, weight 1; reset is P − e.
				take(minute, 0, ok(0, minute)),
				// e = 5.999999s: 10·54.000001s + 60s > 600s by 10µs·10.
				take(minute+6*sec-us, 1, denied(0, 54*sec+us, us)),
				take(minute+6*sec, 1, ok(0, 114*sec)),
				// e = 30s: 10·30s + 1·60s = 360s of 600s: 4 whole left.
				take(minute+30*sec, 0, ok(4, 90*sec)),
				// cur + c = 6 ≤ R: (10·30s − 4·60s)/10 = 6s.
				take(minute+30*sec, 5, denied(4, 90*sec, 6*sec)),
				take(minute+36*sec, 5, ok(0, 84*sec)),
				take(minute+36*sec, 11, tooHigh(0, 84*sec)),
				// Window 3: window 1's counts are two windows old.
				take(3*minute, 0, ok(10, 0)),
			},
		},
		{
			// P = 10s, R = 3: weights in thirds make fractional waits.
			name:   "3 per 10s: RetryAfter is rounded up to the whole µs",
			limits: []core.Limit{threeIn10s},
			steps: []step{
				take(0, 1, ok(2, 20*sec)),
				take(sec, 1, ok(1, 19*sec)),
				take(2*sec, 1, ok(0, 18*sec)),
				// cur + c = 5 > R: 5s + ceil(2·10s/3) = 5s + 6666667µs.
				take(5*sec, 2, denied(0, 15*sec, 11666667*us)),
				// cur + c = 4 > R: 5s + ceil(10s/3) = 5s + 3333334µs.
				take(5*sec, 1, denied(0, 15*sec, 8333334*us)),
				// Window 1, prev = 3, e = 3333333µs: 3·6666667 + 10e6 =
				// 30000001 > 30e6; wait ceil(1/3) = 1µs.
				take(13333333*us, 1, denied(0, 6666667*us, us)),
				take(13333334*us, 1, ok(0, 16666666*us)),
				// e = 6666666µs, cur = 1: 3·3333334 + 2·10e6 = 30000002 >
				// 30e6; wait ceil(2/3) = 1µs.
				take(16666666*us, 1, denied(0, 13333334*us, us)),
				take(16666667*us, 1, ok(0, 13333333*us)),
			},
		},
		{
			// Found by RunDifferential: R·P ≈ 7.5 × 10²³ is far beyond 2⁵³,
			// so the estimate is rounded, and it denies cur + c = R with
			// prev = 0, where exact arithmetic admits. The wait must still
			// be a number (the first formula would divide 0 by 0; Go and Lua
			// turned the NaN into 0 and 1µs): the second one, P − e here,
			// the doubles' results of docs/algorithms.md, pinned.
			name:   "beyond 2⁵³: a denial the rounding makes has a RetryAfter",
			from:   time.Date(2028, time.June, 16, 19, 8, 23, 782343000, time.UTC),
			limits: []core.Limit{{Rate: 866737933630, Period: 866737933631 * us, Algorithm: core.SlidingWindow}},
			steps: []step{
				take(525*us, 1, ok(866737933628, 1416917332616*us)),
				take(717*us, 866737933629, denied(866737933628, 1416917332424*us, 550179398793*us)),
			},
		},
		{
			name:   "5 per 10s: a cost above the Rate charges nothing",
			limits: []core.Limit{fiveIn10s},
			steps: []step{
				take(0, 6, tooHigh(5, 0)),
				take(0, 5, ok(0, 20*sec)),
				take(0, 6, tooHigh(0, 20*sec)),
				// Window 1, e = 0, prev = 5: ceil((5·10s − 4·10s)/5) = 2s.
				take(10*sec, 1, denied(0, 10*sec, 2*sec)),
				take(12*sec, 1, ok(0, 18*sec)),
			},
		},
	}
}

// slidingLogTests are the tables of the sliding log: the window is
// (now − P, now], so an entry stamped s counts until s + P − 1µs and is
// gone at s + P. A denied cost c waits for the k-th oldest entry to leave,
// k = n + c − R.
func slidingLogTests() []sequence {
	threeIn10s := core.Limit{Rate: 3, Period: 10 * sec, Algorithm: core.SlidingLog}
	return []sequence{
		{
			name:   "3 per 10s: exact moving window, RetryAfter from the k-th oldest entry",
			limits: []core.Limit{threeIn10s},
			steps: []step{
				take(0, 1, ok(2, 10*sec)),
				take(2*sec, 1, ok(1, 10*sec)),
				take(5*sec, 1, ok(0, 10*sec)),
				// Entries 0s, 2s, 5s; reset is when the newest leaves: 15s.
				take(6*sec, 1, denied(0, 9*sec, 4*sec)), // k = 1: 0s leaves at 10s
				take(6*sec, 2, denied(0, 9*sec, 6*sec)), // k = 2: 2s leaves at 12s
				take(6*sec, 3, denied(0, 9*sec, 9*sec)), // k = 3: 5s leaves at 15s
				take(10*sec-us, 1, denied(0, 5*sec+us, us)),
				take(10*sec, 1, ok(0, 10*sec)),
				// (2s, 12s] holds 5s and 10s.
				take(12*sec, 0, ok(1, 8*sec)),
				take(12*sec, 2, denied(1, 8*sec, 3*sec)),
				take(15*sec, 1, ok(1, 10*sec)),
				// A second take in the same µs adds an entry of its own.
				take(15*sec, 1, ok(0, 10*sec)),
				// Entries 10s, 15s, 15s.
				take(16*sec, 1, denied(0, 9*sec, 4*sec)),
				take(16*sec, 2, denied(0, 9*sec, 9*sec)),
				take(16*sec, 3, denied(0, 9*sec, 9*sec)),
				take(16*sec, 4, tooHigh(0, 9*sec)),
				take(25*sec, 0, ok(3, 0)),
			},
		},
	}
}
