package redisstore_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestRequestBytesPerTake measures the bytes a take of one limit sends to
// Redis, per algorithm, and of a take of two limits: the growth of the
// server's total_net_input_bytes over n takes of one client, divided by n.
// It runs only with RATELIMIT_SCRIPT_MEASURE=1 (a measurement, not a
// check):
//
//	RATELIMIT_SCRIPT_MEASURE=1 go test -v -run TestRequestBytesPerTake ./core/redisstore
func TestRequestBytesPerTake(t *testing.T) {
	if os.Getenv("RATELIMIT_SCRIPT_MEASURE") == "" {
		t.Skip("a measurement: set RATELIMIT_SCRIPT_MEASURE=1")
	}
	const n = 2000
	client := redistest.Dedicated(t).Client(t)
	store, kb := newStore(t, client)
	ctx := context.Background()
	cases := map[string][]core.Limit{
		"gcra":              {core.PerSecond(10)},
		"token bucket":      {core.PerSecond(10).WithAlgorithm(core.TokenBucket)},
		"fixed window":      {core.PerSecond(10).WithAlgorithm(core.FixedWindow)},
		"sliding window":    {core.PerSecond(10).WithAlgorithm(core.SlidingWindow)},
		"sliding log":       {core.PerSecond(10).WithAlgorithm(core.SlidingLog)},
		"gcra + 100-per-1m": {core.PerSecond(10), core.PerMinute(100)},
	}
	for name, limits := range cases {
		keys := kb.AppendKeys(nil, "203.0.113.7", limits)
		_, err := store.Take(ctx, nil, keys, limits, 1) // loads the script
		require.NoError(t, err)
		before := netInput(t, client)
		for range n {
			_, err := store.Take(ctx, nil, keys, limits, 1)
			require.NoError(t, err)
		}
		after := netInput(t, client)
		t.Logf("%-18s %6.1f request bytes per take", name, float64(after-before)/n)
	}
}

// netInput returns the server's total_net_input_bytes.
func netInput(t *testing.T, client *redis.Client) int64 {
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
