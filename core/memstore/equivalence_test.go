package memstore

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ratelimitkit/ratelimit/core"
)

// GCRA and the token bucket are one machine in two coordinates: on the same
// requests they admit alike and report the same quota; their waits agree
// to the microsecond the tolerance allows (tat, near 3.6·10¹³ µs in 2025,
// is rounded to about 0.004 µs at each take, the bucket's tokens far more
// finely, so over long runs without a full refill the two drift apart by
// fractions of a µs).
func TestGCRAAndTokenBucketDecideAlike(t *testing.T) {
	tests := []struct {
		name  string
		limit core.Limit
	}{
		{"10 per second", core.PerSecond(10)},
		{"3 per second, burst 5", core.PerSecond(3).WithBurst(5)},
		{"one every 3 minutes", core.Every(3 * time.Minute)},
		{"7 per hour", core.PerHour(7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			gcra, clock := newTestStore(t)
			bucket, _ := New(WithClock(clock.Now))
			interval := tt.limit.Interval()
			var at time.Duration
			for i := range 2000 {
				at += us(rng.Int64N(interval.Microseconds()*2/tt.limit.Capacity() + 1))
				clock.SetOffset(at)
				cost := rng.Int64N(3)
				g := takeOne(t, gcra, "k", tt.limit, cost)
				b := takeOne(t, bucket, "k", tt.limit.WithAlgorithm(core.TokenBucket), cost)

				if !assert.Equal(t, g.Allowed, b.Allowed, "take %d at %v, cost %d", i, at, cost) {
					return
				}
				assert.Equal(t, g.Reason, b.Reason, "take %d", i)
				assert.Equal(t, g.Remaining, b.Remaining, "take %d", i)
				assert.InDelta(t, g.ResetAfter, b.ResetAfter, float64(time.Microsecond), "take %d", i)
				assert.InDelta(t, g.RetryAfter, b.RetryAfter, float64(time.Microsecond), "take %d", i)
			}
		})
	}
}

// The largest valid limits keep every value finite and every count exact.
func TestLargestLimitsStayExact(t *testing.T) {
	const maxRate = 1 << 40
	longest := 366 * 24 * time.Hour
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s, clock := newTestStore(t)
			clock.SetOffset(20 * 365 * 24 * time.Hour) // 2045
			l := core.Limit{Rate: maxRate, Period: longest, Algorithm: alg}

			d := takeOne(t, s, "k", l, maxRate-1)
			assert.Equal(t, allowed(1, d.ResetAfter), wantOf(d))
			d = takeOne(t, s, "k", l, 2)
			assert.False(t, d.Allowed)
			assert.Equal(t, int64(1), d.Remaining)
			assert.Positive(t, d.RetryAfter)
			assert.LessOrEqual(t, d.RetryAfter, 2*longest)
		})
	}
}
