package memstore

import (
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// GCRA and the token bucket are one machine in two coordinates
// (docs/algorithms.md), so one table checks both.
func TestTakeGCRAAndTokenBucket(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		limit core.Limit
		steps []step
	}{
		{
			name:  "burst exhausted, then one request back per interval",
			limit: core.PerSecond(4),
			steps: []step{
				{0, 1, allowed(3, 250*ms)},
				{0, 1, allowed(2, 500*ms)},
				{0, 1, allowed(1, 750*ms)},
				{0, 1, allowed(0, time.Second)},
				{0, 1, denied(0, time.Second, 250*ms)},
				{250 * ms, 1, allowed(0, time.Second)},
				{300 * ms, 1, denied(0, 950*ms, 200*ms)},
				{2 * time.Second, 0, allowed(4, 0)},
			},
		},
		{
			name:  "burst above the rate",
			limit: core.PerMinute(60).WithBurst(3),
			steps: []step{
				{0, 1, allowed(2, time.Second)},
				{0, 1, allowed(1, 2*time.Second)},
				{0, 1, allowed(0, 3*time.Second)},
				{0, 1, denied(0, 3*time.Second, time.Second)},
				{2 * time.Second, 1, allowed(1, 2*time.Second)},
			},
		},
		{
			name:  "3 per second refills a third of a second apart, to the microsecond",
			limit: core.PerSecond(3),
			steps: []step{
				{0, 3, allowed(0, time.Second)},
				{us(333332), 1, denied(0, us(666668), us(1))},
				// Due at 333333.33µs: 0.33µs early is within the tolerance.
				{us(333333), 1, allowed(0, time.Second)},
				// The 0.33µs debt is kept: due at 666666.67µs, so 0.67µs
				// early is too early.
				{us(666666), 1, denied(0, us(666667), us(1))},
				{us(666667), 1, allowed(0, time.Second)},
				{time.Second, 0, allowed(1, us(666667))},
			},
		},
		{
			name:  "one every 3 minutes",
			limit: core.Every(3 * time.Minute),
			steps: []step{
				{0, 1, allowed(0, 3*time.Minute)},
				{time.Minute, 1, denied(0, 2*time.Minute, 2*time.Minute)},
				{3 * time.Minute, 1, allowed(0, 3*time.Minute)},
				{3*time.Minute + time.Second, 0, allowed(0, 2*time.Minute+59*time.Second)},
				{6 * time.Minute, 0, allowed(1, 0)},
			},
		},
		{
			name:  "costs above 1 and above the capacity",
			limit: core.PerSecond(10),
			steps: []step{
				{0, 4, allowed(6, 400*ms)},
				{0, 4, allowed(2, 800*ms)},
				{0, 4, denied(2, 800*ms, 200*ms)},
				{0, 11, tooHigh(2, 800*ms)},
				{0, 2, allowed(0, time.Second)},
			},
		},
		{
			name:  "peek reports and charges nothing",
			limit: core.PerSecond(10),
			steps: []step{
				{0, 0, allowed(10, 0)},
				{0, 1, allowed(9, 100*ms)},
				{0, 0, allowed(9, 100*ms)},
				{50 * ms, 0, allowed(9, 50*ms)},
				{100 * ms, 0, allowed(10, 0)},
			},
		},
	}
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket} {
		for _, tt := range tests {
			t.Run(alg.String()+"/"+tt.name, func(t *testing.T) {
				runSteps(t, tt.limit.WithAlgorithm(alg), tt.steps)
			})
		}
	}
}
