package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkRequestBytesPerTake measures the bytes a take of one limit
// sends to Redis, per algorithm, and of a take of two limits: the growth of
// the server's total_net_input_bytes over b.N takes of one client, divided
// by b.N, reported as request-B/take:
//
//	go test -run '^$' -bench RequestBytesPerTake ./core/redisstore
func BenchmarkRequestBytesPerTake(b *testing.B) {
	client := redistest.Dedicated(b).Client(b)
	store, kb := newStore(b, client)
	ctx := context.Background()
	cases := []struct {
		name   string
		limits []core.Limit
	}{
		{"gcra", []core.Limit{core.PerSecond(10)}},
		{"token-bucket", []core.Limit{core.PerSecond(10).WithAlgorithm(core.TokenBucket)}},
		{"fixed-window", []core.Limit{core.PerSecond(10).WithAlgorithm(core.FixedWindow)}},
		{"sliding-window", []core.Limit{core.PerSecond(10).WithAlgorithm(core.SlidingWindow)}},
		{"sliding-log", []core.Limit{core.PerSecond(10).WithAlgorithm(core.SlidingLog)}},
		{"gcra+100-per-1m", []core.Limit{core.PerSecond(10), core.PerMinute(100)}},
	}
	for _, tt := range cases {
		b.Run(tt.name, func(b *testing.B) {
			keys := kb.AppendKeys(nil, "203.0.113.7", tt.limits)
			_, err := store.Take(ctx, nil, keys, tt.limits, 1) // loads the script
			require.NoError(b, err)
			before := netInput(b, client)
			b.ResetTimer()
			for range b.N {
				_, err := store.Take(ctx, nil, keys, tt.limits, 1)
				require.NoError(b, err)
			}
			b.StopTimer()
			b.ReportMetric(float64(netInput(b, client)-before)/float64(b.N), "request-B/take")
		})
	}
}

// netInput returns the server's total_net_input_bytes.
func netInput(t testing.TB, client *redis.Client) int64 {
	t.Helper()
	info, err := client.Info(context.Background(), "stats").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_net_input_bytes:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("INFO stats has no total_net_input_bytes")
	return 0
}
