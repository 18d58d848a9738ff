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
// back: a store may treat the earlier reading as the latest one it saw, or
// compute with it, but it must not admit more than with a clock that
// never went back. Only admissions are checked; the other fields of a
// decision at the earlier instant are the store's choice.
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
