//go:build !race

package core_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// A decision over the memory store for a client that has state allocates
// nothing, for one limit or several, with the deny cache on (the default)
// or off: keys and the store's decisions live in a pooled scratch and the
// Result holds up to four decisions inline. (The race detector adds
// allocations, hence the build tag.)
func TestLimiterAllowAllocations(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		for _, denyCache := range []bool{true, false} {
			t.Run(fmt.Sprintf("limits=%d/deny-cache=%t", n, denyCache), func(t *testing.T) {
				limits := make([]core.Limit, n)
				for i := range limits {
					limits[i] = core.PerSecond(int64(100_000 + i)) // never denies within the test: the store path
				}
				opts := []core.Option{core.WithLimits(limits...)}
				if !denyCache {
					opts = append(opts, core.WithDenyCache(0))
				}
				l := newTestLimiter(t, opts...)
				ctx := context.Background()
				_, err := l.Allow(ctx, "203.0.113.7")
				require.NoError(t, err)

				allocs := testing.AllocsPerRun(1000, func() {
					res, err := l.Take(ctx, core.Request{Identity: "203.0.113.7", Cost: 1})
					if err != nil || !res.Allowed || res.Len() != n {
						t.Fatal(res, err)
					}
				})

				assert.Zero(t, allocs)
			})
		}
	}
}

// A client that the deny cache holds is denied without allocating: the
// cached Result is aged in place, in its inline decisions.
func TestDenyCacheHitAllocations(t *testing.T) {
	mem, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	store := &countingStore{Store: mem}
	l, err := core.NewLimiter(store, core.WithLimits(core.PerHour(1).WithName("h"), core.PerDay(10).WithName("d")))
	require.NoError(t, err)
	ctx := context.Background()
	for range 2 { // admitted, then denied and cached for about an hour
		_, err := l.Allow(ctx, "203.0.113.7")
		require.NoError(t, err)
	}

	allocs := testing.AllocsPerRun(1000, func() {
		res, err := l.Allow(ctx, "203.0.113.7")
		if err != nil || res.Allowed || res.Binding().Reason != core.Exhausted {
			t.Fatal(res, err)
		}
	})

	assert.Zero(t, allocs)
	assert.Equal(t, int64(2), store.calls.Load(), "every denial after the first came from the deny cache")
}

// countingStore counts the takes that reach a memory store.
type countingStore struct {
	*memstore.Store
	calls atomic.Int64
}

func (s *countingStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.calls.Add(1)
	return s.Store.Take(ctx, dst, keys, limits, cost)
}
