package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// TestRealTimeConcurrency hammers one key from 64 goroutines over 4 clients
// (4 app nodes) for more than two windows, on the server's own clock
// (TIME, no test clock). The admitted count must stay within the
// algorithm's bound over the measured span S:
//
//   - FixedWindow (R per P): S meets at most floor(S/P) + 2 windows (a
//     partial one at each end), so admitted ≤ R·(floor(S/P) + 2).
//   - GCRA (R per P, burst B): admitted ≤ B + S·R/P, plus 1 for the 0.5 µs
//     tolerance.
//
// S is measured on the test's monotonic clock from before the first take
// is sent to after the last reply, so it contains every server timestamp:
// that is the margin, and it is generous (the goroutines' start-up and the
// last round trip count as time in which tokens refill). The floor is one
// full quota: the goroutines never stop asking.
func TestRealTimeConcurrency(t *testing.T) {
	const (
		goroutines = 64
		nodes      = 4
		period     = 200 * time.Millisecond
		rate       = 20
		duration   = 2*period + period/4
	)
	tests := []struct {
		name  string
		limit core.Limit
		bound func(span time.Duration) int64
	}{
		{"FixedWindow 20 per 200ms", core.Limit{Rate: rate, Period: period, Algorithm: core.FixedWindow},
			func(span time.Duration) int64 { return rate * (int64(span/period) + 2) }},
		{"GCRA 20 per 200ms", core.Limit{Rate: rate, Period: period},
			func(span time.Duration) int64 { return rate + int64(span*rate/period) + 1 }},
	}
	for _, b := range backends {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				clients := b.clients(t, nodes)
				stores := make([]*redisstore.Store, nodes)
				for i, c := range clients {
					stores[i] = mustNew(t, c)
				}
				kb := newKeyBuilder(t, clients[0])
				limits := []core.Limit{tt.limit}
				keys := kb.AppendKeys(nil, "hot", limits)

				admitted, span := hammer(t, stores, keys, limits, goroutines, duration)

				t.Logf("admitted %d in %s (bound %d)", admitted, span, tt.bound(span))
				assert.LessOrEqual(t, admitted, tt.bound(span))
				assert.GreaterOrEqual(t, admitted, int64(rate))
			})
		}
	}
}

// hammer takes cost 1 from goroutines goroutines spread over stores until
// duration has passed, and returns how many takes were admitted and the
// span from before the first take to after the last reply.
func hammer(t *testing.T, stores []*redisstore.Store, keys []string, limits []core.Limit, goroutines int, duration time.Duration) (int64, time.Duration) {
	var (
		admitted atomic.Int64
		failed   atomic.Int64
		wg       sync.WaitGroup
	)
	ctx := context.Background()
	begin := time.Now()
	deadline := begin.Add(duration)
	for g := range goroutines {
		store := stores[g%len(stores)]
		wg.Go(func() {
			var dst []core.Decision
			for time.Now().Before(deadline) {
				var err error
				dst, err = store.Take(ctx, dst[:0], keys, limits, 1)
				if err != nil {
					failed.Add(1)
					return
				}
				if dst[0].Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	span := time.Since(begin)
	require.Zero(t, failed.Load(), "takes that failed")
	return admitted.Load(), span
}
