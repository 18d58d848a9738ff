package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ratelimitkit/ratelimit/core"
)

// namedAlgorithm is an algorithm with the subtest name the suite uses.
type namedAlgorithm struct {
	name string
	alg  core.Algorithm
}

// allAlgorithms returns every algorithm.
func allAlgorithms() []namedAlgorithm {
	return []namedAlgorithm{
		{"GCRA", core.GCRA},
		{"TokenBucket", core.TokenBucket},
		{"FixedWindow", core.FixedWindow},
		{"SlidingWindow", core.SlidingWindow},
		{"SlidingLog", core.SlidingLog},
	}
}

// testClockBackwards steps the clock back (an NTP step, a Redis failover to
// a node whose clock is a little behind) and checks that no quota comes
// back: the store must not admit more than with a clock that never went
// back. Only admissions are checked here; [clockBackTests] pins the other
// fields of the decisions at the earlier instant.
//
// Each algorithm has 10 per 10s (T = 1s for the buckets), stepped back
// within a window (15s to 14s) and across a window boundary (20s to
// 19.999s, where a window algorithm must not reopen the old window).
func testClockBackwards(t *testing.T, newStore NewStore) {
	const quota int64 = 10
	tests := []struct {
		name           string
		later, earlier time.Duration
	}{
		{"1s back within a window", 15 * sec, 14 * sec},
		{"1ms back across a window boundary", 20 * sec, 20*sec - ms},
	}
	for _, a := range allAlgorithms() {
		limits := []core.Limit{{Rate: quota, Period: 10 * sec, Algorithm: a.alg}}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/exhausted, then %s", a.name, tt.name), func(t *testing.T) {
				clock := NewClock()
				c := newClient(newStore(t, clock.Now), UniqueKeyBuilder(t), "client", limits)
				exhaustThenGoBack(t, clock, c, a.name, tt.later, tt.earlier, quota)
			})
			t.Run(fmt.Sprintf("%s/half the quota, then %s", a.name, tt.name), func(t *testing.T) {
				clock := NewClock()
				c := newClient(newStore(t, clock.Now), UniqueKeyBuilder(t), "client", limits)
				halfThenGoBack(t, clock, c, a.name, tt.later, tt.earlier, quota)
			})
		}
	}
}

// exhaustThenGoBack exhausts the quota at later, then requires a take at
// earlier and another at later to be denied.
func exhaustThenGoBack(t *testing.T, clock *Clock, c client, alg string, later, earlier time.Duration, quota int64) {
	clock.SetOffset(later)
	assert.Equal(t, quota, takeUntilDenied(t, c, quota+1), "%s at %v: admitted from a fresh key", alg, later)
	clock.SetOffset(earlier)
	d := c.take(t, 1)[0]
	assert.False(t, d.Allowed, "%s back at %v: Allowed", alg, earlier)
	assert.Equal(t, int64(0), d.Remaining, "%s back at %v: Remaining", alg, earlier)
	clock.SetOffset(later)
	assert.False(t, c.take(t, 1)[0].Allowed, "%s at %v again: Allowed", alg, later)
}

// halfThenGoBack takes half the quota at later, then all it can at
// earlier and again at later: the three together must fit the quota.
func halfThenGoBack(t *testing.T, clock *Clock, c client, alg string, later, earlier time.Duration, quota int64) {
	clock.SetOffset(later)
	first := takeUntilDenied(t, c, quota/2)
	clock.SetOffset(earlier)
	back := takeUntilDenied(t, c, quota+1)
	clock.SetOffset(later)
	again := takeUntilDenied(t, c, quota+1)
	assert.LessOrEqual(t, first+back+again, quota,
		"%s: admitted %d at %v, then %d at %v, then %d at %v: more than the quota %d",
		alg, first, later, back, earlier, again, later, quota)
}

// takeUntilDenied takes cost 1 until a take is denied or limit takes were
// admitted, and returns how many were admitted.
func takeUntilDenied(t *testing.T, c client, limit int64) int64 {
	t.Helper()
	var n int64
	for n < limit && allDecisionsAllowed(c.take(t, 1)) {
		n++
	}
	return n
}

func allDecisionsAllowed(ds []core.Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}

// clockBackTests are the tables of a clock that goes back (docs/algorithms.md,
// "A clock that goes back brings no quota back"), worked out by hand. Each
// algorithm computes at its key's own time: GCRA with the reading and
// max(tat, now); the token bucket at max(now, ts); the windows at
// max(now, start of the stored window); the sliding log at max(now, its
// newest entry), where it also writes. Every wait and reset is measured
// from the reading: longer by the lag, so a client that waits RetryAfter on
// the clock it was answered by passes, and the TTL covers the state.
func clockBackTests() []sequence {
	tenIn10s := core.Limit{Rate: 10, Period: 10 * sec} // T = 1s, B·T = 10s
	fiveIn10s := core.Limit{Rate: 5, Period: 10 * sec}
	return []sequence{
		{
			name:   "GCRA: a reading behind computes with the reading, tat further away",
			limits: []core.Limit{tenIn10s},
			steps: []step{
				take(20*sec, 10, ok(0, 10*sec)), // tat = 30s
				// 1s back: tat is 11s away, the next token due at 21s.
				take(19*sec, 1, denied(0, 11*sec, 2*sec)),
				take(21*sec, 1, ok(0, 10*sec)), // tat = 31s
				take(40*sec, 5, ok(5, 5*sec)),  // full; tat = 45s
				// 2s back: tat is 7s away, (10s − 7s)/T = 3 tokens.
				take(38*sec, 3, ok(0, 10*sec)),
				take(38*sec, 1, denied(0, 10*sec, sec)),
			},
		},
		{
			name:   "TokenBucket: a reading behind ts is taken as ts",
			limits: []core.Limit{tenIn10s.WithAlgorithm(core.TokenBucket)},
			steps: []step{
				take(20*sec, 10, ok(0, 10*sec)), // tk = 0, ts = 20s
				// 1s back: at ts, 0 tokens; a token 1s after ts, 2s away.
				take(19*sec, 1, denied(0, 11*sec, 2*sec)),
				take(21*sec, 1, ok(0, 10*sec)),
				take(40*sec, 5, ok(5, 5*sec)), // tk = 5, ts = 40s
				// 2s back: 5 tokens at ts; full 5s after ts, 7s away.
				take(38*sec, 0, ok(5, 7*sec)),
				take(38*sec, 5, ok(0, 12*sec)), // ts stays 40s
				take(38*sec, 1, denied(0, 12*sec, 3*sec)),
				take(41*sec, 1, ok(0, 10*sec)),
			},
		},
		{
			name:   "FixedWindow: the old window never reopens, its end is measured from the reading",
			limits: []core.Limit{fiveIn10s.WithAlgorithm(core.FixedWindow)},
			steps: []step{
				take(25*sec, 5, ok(0, 5*sec)),
				// 6s back, into window [10s, 20s): taken as 20s, window [20s, 30s).
				take(19*sec, 1, denied(0, 11*sec, 11*sec)),
				take(30*sec, 5, ok(0, 10*sec)),
				take(41*sec, 2, ok(3, 9*sec)),
				take(39*sec, 3, ok(0, 11*sec)), // counted in window [40s, 50s)
				take(45*sec, 1, denied(0, 5*sec, 5*sec)),
			},
		},
		{
			name:   "SlidingWindow: the old window never reopens, the waits are measured from the reading",
			limits: []core.Limit{fiveIn10s.WithAlgorithm(core.SlidingWindow)},
			steps: []step{
				take(25*sec, 5, ok(0, 15*sec)), // window 2, e = 5s
				// 1s back: taken as 20s (e = 0); reset 2P − e + 1s.
				take(19*sec, 0, ok(0, 21*sec)),
				// Into window 3: (P − e) + P − (R − c)·P/cur = 12s, + 1s.
				take(19*sec, 1, denied(0, 21*sec, 13*sec)),
				// Window 3, e = 2s: 5·8s/10s + 1 = 5 of 5.
				take(32*sec, 1, ok(0, 18*sec)),
			},
		},
		{
			// The review's case: entries written under a clock 1.5s ahead,
			// then a failover to a server whose clock is behind.
			name:   "SlidingLog: a reading behind the newest entry is taken as its time, and written there",
			limits: []core.Limit{{Rate: 5, Period: 2 * sec, Algorithm: core.SlidingLog}},
			steps: []step{
				take(10*sec, 4, ok(1, 2*sec)),
				// 1.5s back: the log's time is 10s; the entry is written at
				// 10s and lives until 12s, 3.5s from the reading.
				take(8500*ms, 1, ok(0, 3500*ms)),
				take(8500*ms, 1, denied(0, 3500*ms, 3500*ms)),
				// 2.1s after the step back, (8.6s, 10.6s] still holds all 5.
				take(10600*ms, 5, denied(0, 1400*ms, 1400*ms)),
				take(10600*ms, 1, denied(0, 1400*ms, 1400*ms)),
				take(12*sec, 5, ok(0, 2*sec)),
			},
		},
		{
			name: "several limits: each keeps its own time, all or nothing",
			limits: []core.Limit{
				tenIn10s.WithAlgorithm(core.TokenBucket),
				{Rate: 5, Period: 2 * sec, Algorithm: core.SlidingLog},
			},
			steps: []step{
				take(10*sec, 4, ok(6, 4*sec), ok(1, 2*sec)),
				// 1s back: the bucket at ts = 10s, the log at 10s. The log
				// denies, so the bucket reports its quota before the take.
				take(9*sec, 2, ok(6, 5*sec), denied(1, 3*sec, 3*sec)),
				take(9*sec, 1, ok(5, 6*sec), ok(0, 3*sec)),
				take(12*sec, 5, ok(2, 8*sec), ok(0, 2*sec)),
			},
		},
	}
}

// beforeEpochTests start in 1970, before the stores' epoch of 2024 (a
// host that boots with its clock at 0 before NTP sets it): time values
// are negative, and everything runs as in 2025. 1970-01-01 is a day
// boundary of the epoch, so the windows start at the first step.
func beforeEpochTests() []sequence {
	fiveIn10s := core.Limit{Rate: 5, Period: 10 * sec} // T = 2s
	unix0 := time.Unix(0, 0)
	return []sequence{
		{
			name:   "GCRA in 1970",
			from:   unix0,
			limits: []core.Limit{fiveIn10s},
			steps: []step{
				take(0, 5, ok(0, 10*sec)),
				take(0, 1, denied(0, 10*sec, 2*sec)),
				take(2*sec, 1, ok(0, 10*sec)),
				take(30*sec, 5, ok(0, 10*sec)),
			},
		},
		{
			name:   "TokenBucket in 1970",
			from:   unix0,
			limits: []core.Limit{fiveIn10s.WithAlgorithm(core.TokenBucket)},
			steps: []step{
				take(0, 5, ok(0, 10*sec)),
				take(0, 1, denied(0, 10*sec, 2*sec)),
				take(2*sec, 1, ok(0, 10*sec)),
				take(30*sec, 5, ok(0, 10*sec)),
			},
		},
		{
			name:   "FixedWindow in 1970",
			from:   unix0,
			limits: []core.Limit{fiveIn10s.WithAlgorithm(core.FixedWindow)},
			steps: []step{
				take(0, 5, ok(0, 10*sec)),
				take(9*sec, 1, denied(0, sec, sec)),
				take(10*sec, 5, ok(0, 10*sec)),
			},
		},
		{
			name:   "SlidingWindow in 1970",
			from:   unix0,
			limits: []core.Limit{fiveIn10s.WithAlgorithm(core.SlidingWindow)},
			steps: []step{
				take(0, 5, ok(0, 20*sec)),
				// Window 1, e = 0, prev = 5: (R − cur − c)·P/prev = 8s of 10s.
				take(10*sec, 1, denied(0, 10*sec, 2*sec)),
				take(20*sec, 5, ok(0, 20*sec)),
			},
		},
		{
			name:   "SlidingLog in 1970",
			from:   unix0,
			limits: []core.Limit{fiveIn10s.WithAlgorithm(core.SlidingLog)},
			steps: []step{
				take(0, 5, ok(0, 10*sec)),
				take(5*sec, 1, denied(0, 5*sec, 5*sec)),
				take(10*sec, 5, ok(0, 10*sec)),
			},
		},
	}
}
