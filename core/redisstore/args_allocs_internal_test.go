//go:build !race

package redisstore

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// A take's command costs two allocations, its argument slice and the
// command, and one per key (boxed as an any). The limits' values
// (rate, period, capacity: too large for the integers Go boxes for free)
// are boxed once, not per take. (The race detector adds allocations,
// hence the build tag.)
func TestCallAllocations(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { _ = client.Close() })
	s, err := New(client, WithLogger(nil))
	require.NoError(t, err)
	ctx := context.Background()
	tests := []struct {
		name   string
		limits []core.Limit
	}{
		{"gcra", []core.Limit{core.PerSecond(1_000_000)}},
		{"gcra-with-burst", []core.Limit{core.PerMinute(60_000).WithBurst(1_000)}},
		{"two-limits", []core.Limit{core.PerSecond(1_000), core.PerHour(1_000_000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := make([]string, len(tt.limits))
			for i := range keys {
				keys[i] = "{client}:" + tt.limits[i].EffectiveName()
			}
			allocs := testing.AllocsPerRun(1000, func() {
				_, _ = s.call(ctx, keys, tt.limits, 1, "")
			})
			assert.Equal(t, float64(2+len(keys)), allocs)
		})
	}
}
