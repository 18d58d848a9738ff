package storetest

import "github.com/ratelimitkit/ratelimit/core"

// bucketTests are the tables of GCRA, run as they are for the token bucket
// (a is core.GCRA or core.TokenBucket): docs/algorithms.md makes them the
// same machine in two coordinates, tat = now + (B − tokens)·T, so every
// decision is the same.
//
// Notation: T = Period/Rate, B = capacity; "tat" is the GCRA state, the
// time at which the bucket is full again. A fresh key has tat = now.
func bucketTests(a core.Algorithm) []sequence {
	return []sequence{
		{
			// T = 6s, B = 10, B·T = 60s: each take moves tat 6s further.
			name:   "10 per minute: a burst of 10 one by one, then one every 6s",
			limits: []core.Limit{core.PerMinute(10).WithAlgorithm(a)},
			steps: []step{
				take(0, 1, ok(9, 6*sec)),
				take(0, 1, ok(8, 12*sec)),
				take(0, 1, ok(7, 18*sec)),
				take(0, 1, ok(6, 24*sec)),
				take(0, 1, ok(5, 30*sec)),
				take(0, 1, ok(4, 36*sec)),
				take(0, 1, ok(3, 42*sec)),
				take(0, 1, ok(2, 48*sec)),
				take(0, 1, ok(1, 54*sec)),
				take(0, 1, ok(0, minute)),
				// tat = 60s: empty; the next token is back at 6s.
				take(0, 1, denied(0, minute, 6*sec)),
				// 1µs early: 0.99999983 tokens floor to 0; reset 60s − 5.999999s.
				take(6*sec-us, 1, denied(0, 54*sec+us, us)),
				take(6*sec, 1, ok(0, minute)),
				take(6*sec, 1, denied(0, minute, 6*sec)),
				// tat = 66s, at 21s: (60 − 45)/6 = 2.5 tokens; 1.5 after the
				// take floors to 1; tat becomes 72s, 51s away.
				take(21*sec, 1, ok(1, 51*sec)),
				// tat = 72s is past at 2m: full, and a peek says so.
				take(2*minute, 0, ok(10, 0)),
			},
		},
		{
			// T = 1e6/3 = 333333.33µs. A take within TOL = 0.5µs before its
			// exact time passes, and the debt (< 0.5µs) is carried in tat.
			name:   "3 per second: fractional interval, the 0.5µs tolerance and its carried debt",
			limits: []core.Limit{core.PerSecond(3).WithAlgorithm(a)},
			steps: []step{
				take(0, 3, ok(0, sec)),
				// Due at 333333.33µs: 0.33µs early is within TOL, admitted;
				// tat = 1333333.33, 1000000.33µs away, rounds to 1s.
				take(333333*us, 1, ok(0, sec)),
				// Due at 666666.67µs: 0.67µs early is not; the wait rounds to
				// 1µs, and tat is 666667.33µs away.
				take(666666*us, 1, denied(0, 666667*us, us)),
				take(666667*us, 1, ok(0, sec)),
				// tat = 1666666.67 is past at 2s: full again; tat = 3000000.
				take(2*sec, 3, ok(0, sec)),
				// 2 tokens are due at tat + 2T − B·T = 2666666.67µs, 333334.67µs
				// away, rounded to 333335µs; tat is 666668µs away.
				take(2*sec+333332*us, 2, denied(0, 666668*us, 333335*us)),
				// 1.999998 tokens: 1 whole; 0.67µs early is outside TOL.
				take(2*sec+666666*us, 2, denied(1, 333334*us, us)),
				// 0.33µs early: admitted; tat = 3666666.67, 999999.67µs away.
				take(2*sec+666667*us, 2, ok(0, sec)),
			},
		},
		{
			// Rate 1, Period 3m: T = B·T = 180s.
			name:   "one every 3 minutes: the token comes back exactly at 3m",
			limits: []core.Limit{core.Every(3 * minute).WithAlgorithm(a)},
			steps: []step{
				take(0, 1, ok(0, 3*minute)),
				take(0, 1, denied(0, 3*minute, 3*minute)),
				take(3*minute-us, 1, denied(0, us, us)),
				take(3*minute, 1, ok(0, 3*minute)),
				// tat = 6m, at 4m30s: half a token, which is 0 whole ones.
				take(4*minute+30*sec, 0, ok(0, 90*sec)),
				take(4*minute+30*sec, 1, denied(0, 90*sec, 90*sec)),
				// Full at 6m; cost 2 is above the capacity 1.
				take(6*minute, 2, tooHigh(1, 0)),
			},
		},
		{
			// 0.5 per second: Rate 1, Period 2s, T = 2s; B = 2, B·T = 4s.
			name:   "0.5 per second with burst 2: cost 2, half tokens",
			limits: []core.Limit{core.Every(2 * sec).WithBurst(2).WithAlgorithm(a)},
			steps: []step{
				take(0, 2, ok(0, 4*sec)),
				// tat = 4s, at 1s: (4 − 3)/2 = 0.5 token; one is due at 2s.
				take(sec, 1, denied(0, 3*sec, sec)),
				take(2*sec-us, 1, denied(0, 2*sec+us, us)),
				take(2*sec, 1, ok(0, 4*sec)),
				// tat = 6s, at 5s: 1.5 tokens. Cost 2 is due at
				// tat + 2T − B·T = 6s, 1s away; cost 1 passes.
				take(5*sec, 2, denied(1, sec, sec)),
				take(5*sec, 1, ok(0, 3*sec)),
				take(12*sec, 0, ok(2, 0)),
			},
		},
		{
			// T = 6s, B = 5.
			name:   "10 per minute with burst 5: a cost above the burst charges nothing",
			limits: []core.Limit{core.PerMinute(10).WithBurst(5).WithAlgorithm(a)},
			steps: []step{
				take(0, 6, tooHigh(5, 0)),
				take(0, 5, ok(0, 30*sec)),
				take(0, 6, tooHigh(0, 30*sec)),
				take(0, 1, denied(0, 30*sec, 6*sec)),
				take(6*sec, 1, ok(0, 30*sec)),
			},
		},
	}
}
