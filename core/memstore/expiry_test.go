package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// Each entry lives until its state is back to the default, rounded up to
// the millisecond like the scripts' PEXPIRE, then reads as absent.
func TestEntryExpiresWhenStateIsBackToDefault(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		limit   core.Limit
		at      time.Duration
		cost    int64
		wantTTL time.Duration
	}{
		{"gcra: until the tat", core.PerSecond(10), 0, 3, 300 * ms},
		{"gcra: at least 1ms", core.PerSecond(1_000_000), 0, 1, ms},
		{"gcra: rounded up to the millisecond", core.PerSecond(3), 0, 1, 334 * ms},
		{"token bucket: until full", core.PerSecond(10).WithAlgorithm(core.TokenBucket), 0, 3, 300 * ms},
		{"fixed window: until the window ends", core.PerMinute(10).WithAlgorithm(core.FixedWindow), 50 * time.Second, 1, 10 * time.Second},
		{"sliding window: until the next window ends", core.PerSecond(10).WithAlgorithm(core.SlidingWindow), 250 * ms, 1, 1750 * ms},
		{"sliding log: one period", core.PerMinute(5).WithAlgorithm(core.SlidingLog), 250 * ms, 1, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clock := newTestStore(t)
			clock.SetOffset(tt.at)
			takeOne(t, s, "k", tt.limit, tt.cost)
			require.Equal(t, 1, s.Len())

			clock.SetOffset(tt.at + tt.wantTTL)
			takeOne(t, s, "k", tt.limit, 0)
			assert.Equal(t, 1, s.Len(), "present until its TTL")

			clock.SetOffset(tt.at + tt.wantTTL + us(1))
			d := takeOne(t, s, "k", tt.limit, 0)
			assert.Equal(t, 0, s.Len(), "removed when touched after its TTL")
			assert.Equal(t, allowed(tt.limit.Capacity(), 0), wantOf(d), "absent is full quota")
		})
	}
}

func TestPeekOfUnknownKeyStoresNothing(t *testing.T) {
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s, _ := newTestStore(t)
			takeOne(t, s, "k", core.PerSecond(5).WithAlgorithm(alg), 0)
			assert.Equal(t, 0, s.Len())
		})
	}
}

func TestDeniedTakeOfUnknownKeyStoresNothing(t *testing.T) {
	s, _ := newTestStore(t)
	d := takeOne(t, s, "k", core.PerSecond(5), 6)
	assert.Equal(t, core.CostTooHigh, d.Reason)
	assert.Equal(t, 0, s.Len())
}

func TestStoreNeverHoldsMoreThanMaxKeys(t *testing.T) {
	const maxKeys = 100
	s, clock := newTestStore(t, WithMaxKeys(maxKeys), WithShards(4))
	for i := range 10 * maxKeys { // identities rotated, each one request
		clock.SetOffset(time.Duration(i) * time.Millisecond)
		d := takeOne(t, s, fmt.Sprintf("rl:{id-%d}:day:g", i), core.PerDay(100), 1)
		require.True(t, d.Allowed)
		require.LessOrEqual(t, s.Len(), maxKeys, "after %d identities", i+1)
	}
	assert.Equal(t, maxKeys, s.Len())
}

func TestFullShardDropsExpiredEntriesFirst(t *testing.T) {
	s, clock := newTestStore(t, WithMaxKeys(4), WithShards(1))
	short, long := core.PerSecond(10), core.PerDay(10)
	takeOne(t, s, "short-1", short, 1)
	takeOne(t, s, "short-2", short, 1)
	takeOne(t, s, "long-1", long, 1)
	takeOne(t, s, "long-2", long, 1)

	clock.SetOffset(time.Second) // the short ones have expired
	takeOne(t, s, "new-1", long, 1)
	takeOne(t, s, "new-2", long, 1)

	assert.Equal(t, 4, s.Len())
	for _, key := range []string{"long-1", "long-2", "new-1", "new-2"} {
		assert.Equal(t, int64(9), takeOne(t, s, key, long, 0).Remaining, "%s kept its state", key)
	}
}

// A take reuses the expired entry of its key; a full shard making room for
// the take's other key, written first, must not drop that entry, expired
// as it still is, or the take's write to it would be lost.
func TestFullShardKeepsTheExpiredEntryATakeReuses(t *testing.T) {
	s, clock := newTestStore(t, WithMaxKeys(2), WithShards(1))
	ctx := context.Background()
	limits := []core.Limit{core.PerSecond(10).WithName("b"), core.PerSecond(10).WithName("a")}
	takeOne(t, s, "rl:{c}:a", limits[1], 1)
	takeOne(t, s, "rl:{d}:a", limits[1], 1)

	clock.SetOffset(time.Second) // both expired; the shard is full
	_, err := s.Take(ctx, nil, []string{"rl:{c}:b", "rl:{c}:a"}, limits, 1)
	require.NoError(t, err)

	assert.Equal(t, int64(9), takeOne(t, s, "rl:{c}:a", limits[1], 0).Remaining, "the reused entry kept the take's write")
	assert.Equal(t, int64(9), takeOne(t, s, "rl:{c}:b", limits[0], 0).Remaining, "the new entry too")
}

func TestFullShardEvictsTheEntryClosestToExpiry(t *testing.T) {
	s, _ := newTestStore(t, WithMaxKeys(3), WithShards(1))
	limits := map[string]core.Limit{
		"second": core.PerSecond(1),
		"minute": core.PerMinute(1),
		"hour":   core.PerHour(1),
	}
	for key, l := range limits {
		takeOne(t, s, key, l, 1)
	}

	takeOne(t, s, "new", core.PerHour(1), 1) // nothing expired: one must go

	assert.Equal(t, 3, s.Len())
	assert.Equal(t, int64(1), takeOne(t, s, "second", limits["second"], 0).Remaining, "evicted: full quota again")
	assert.Equal(t, int64(0), takeOne(t, s, "minute", limits["minute"], 0).Remaining, "kept")
	assert.Equal(t, int64(0), takeOne(t, s, "hour", limits["hour"], 0).Remaining, "kept")
}

func TestChangedAlgorithmStartsFromFreshState(t *testing.T) {
	s, _ := newTestStore(t)
	takeOne(t, s, "k", core.PerSecond(3).WithAlgorithm(core.SlidingLog), 3)

	d := takeOne(t, s, "k", core.PerSecond(3).WithAlgorithm(core.FixedWindow), 1)
	assert.Equal(t, allowed(2, time.Second), wantOf(d))
	d = takeOne(t, s, "k", core.PerSecond(3).WithAlgorithm(core.SlidingLog), 1)
	assert.Equal(t, allowed(2, time.Second), wantOf(d))
}
