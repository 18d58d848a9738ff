//go:build !race

package core_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ratelimitkit/ratelimit/core"
)

// A decision over the memory store for a client that has state allocates
// only the Result's decisions: keys come from a pooled buffer. (The race
// detector adds allocations, hence the build tag.)
func TestLimiterAllowAllocations(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		limits := make([]core.Limit, n)
		for i := range limits {
			limits[i] = core.PerSecond(int64(100_000 + i)) // never denies within the test: the store path
		}
		l := newTestLimiter(t, core.WithLimits(limits...), core.WithDenyCache(0))
		ctx := context.Background()
		_, _ = l.Allow(ctx, "203.0.113.7")
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := l.Allow(ctx, "203.0.113.7"); err != nil {
				t.Fatal(err)
			}
		})
		assert.Equal(t, 1.0, allocs, "%d limits", n)
	}
}
