package storetest

import "github.com/ratelimitkit/ratelimit/core"

// multiLimitTests are takes on several limits of one client at once. They
// are all-or-nothing: when one limit denies, none is charged, and every
// decision reports the quota before the take (a limit that alone would
// have admitted says Allowed, with its Remaining before the charge).
func multiLimitTests() []sequence {
	return []sequence{
		{
			// GCRA T = 1s, B·T = 10s; the minute window is [0, 60s).
			name: "GCRA 10 per 10s and FixedWindow 15 per minute",
			limits: []core.Limit{
				{Rate: 10, Period: 10 * sec},
				core.PerMinute(15).WithAlgorithm(core.FixedWindow),
			},
			steps: []step{
				take(0, 10, ok(0, 10*sec), ok(5, minute)),
				// The bucket is full again, the window has 5 left: denied,
				// and the bucket, which would have admitted, is not charged.
				take(10*sec, 10, ok(10, 0), denied(5, 50*sec, 50*sec)),
				take(10*sec, 5, ok(5, 5*sec), ok(0, 50*sec)),
				// Both deny: tat = 15s, cost 6 is due at 15s + 6s − 10s.
				take(10*sec, 6, denied(5, 5*sec, sec), denied(0, 50*sec, 50*sec)),
				take(30*sec, 1, ok(10, 0), denied(0, 30*sec, 30*sec)),
				take(minute, 10, ok(0, 10*sec), ok(5, minute)),
				// Cost 11 is above the burst of 10, and exhausts the window.
				take(minute, 11, tooHigh(0, 10*sec), denied(5, minute, minute)),
				// Nothing was charged at 60s: 5 tokens are back at 65s and
				// the window still has 5.
				take(minute+5*sec, 5, ok(0, 10*sec), ok(0, 55*sec)),
			},
		},
		{
			// Token bucket T = 1s, B = 4; both windows are 10s.
			name: "TokenBucket, SlidingLog and SlidingWindow together",
			limits: []core.Limit{
				core.PerSecond(1).WithBurst(4).WithAlgorithm(core.TokenBucket),
				{Rate: 6, Period: 10 * sec, Algorithm: core.SlidingLog},
				{Rate: 8, Period: 10 * sec, Algorithm: core.SlidingWindow},
			},
			steps: []step{
				take(0, 4, ok(0, 4*sec), ok(2, 10*sec), ok(4, 20*sec)),
				// 1 token for cost 3 (2s short); the log's oldest entry
				// (0s) leaves at 10s; the counter would admit (4 + 3 ≤ 8).
				take(sec, 3, denied(1, 3*sec, 2*sec), denied(2, 9*sec, 9*sec), ok(4, 19*sec)),
				take(2*sec, 2, ok(0, 4*sec), ok(0, 10*sec), ok(2, 18*sec)),
				// Only the log denies; the bucket is not charged.
				take(3*sec, 1, ok(1, 3*sec), denied(0, 9*sec, 7*sec), ok(2, 17*sec)),
				// Log (0s, 10s] keeps the two entries of 2s; counter window 1,
				// e = 0, prev = 6: 6·P + 2·P = 8·P fits exactly.
				take(10*sec, 2, ok(2, 2*sec), ok(2, 10*sec), ok(0, 20*sec)),
				// Only the counter denies: ceil((6·10s − 5·10s)/6) = 1666667µs.
				take(10*sec, 1, ok(2, 2*sec), ok(2, 10*sec), denied(0, 20*sec, 1666667*us)),
				// Bucket: 2 + 1.666667 tokens, 2.666667 after; counter:
				// 6·8333333 + 3·10e6 = 79999998 ≤ 80e6.
				take(11666667*us, 1, ok(2, 1333333*us), ok(1, 10*sec), ok(0, 18333333*us)),
			},
		},
	}
}
