package ratelimitprom_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

// slowStore answers every Take with err after advancing clk by took.
type slowStore struct {
	err  error
	took time.Duration
	clk  *storetest.Clock
}

func (s slowStore) Take(_ context.Context, dst []core.Decision, _ []string, limits []core.Limit, _ int64) ([]core.Decision, error) {
	s.clk.Advance(s.took)
	if s.err != nil {
		return dst, s.err
	}
	for _, l := range limits {
		dst = append(dst, core.Decision{Limit: l, Allowed: true})
	}
	return dst, nil
}

func TestInstrumentStoreObservesLatencyByResult(t *testing.T) {
	clk := storetest.NewClock()
	metrics := ratelimitprom.MustNew(ratelimitprom.WithBuckets(0.001, 0.01))
	take := func(err error, took time.Duration) {
		s := metrics.InstrumentStoreWithClock(slowStore{err: err, took: took, clk: clk}, clk.Now)
		_, gotErr := s.Take(context.Background(), nil, []string{"k"}, []core.Limit{core.PerSecond(1)}, 1)
		require.ErrorIs(t, gotErr, err)
	}

	take(nil, 250*time.Microsecond)
	take(nil, 4*time.Millisecond)
	take(fmt.Errorf("redis: %w", core.ErrStoreUnavailable), 50*time.Millisecond)
	take(errors.New("ERR script error"), 500*time.Microsecond)

	want := `
# HELP ratelimit_store_duration_seconds Duration of rate-limit store calls (one per request that reached the store), by result: ok, unavailable or error.
# TYPE ratelimit_store_duration_seconds histogram
ratelimit_store_duration_seconds_bucket{result="error",le="0.001"} 1
ratelimit_store_duration_seconds_bucket{result="error",le="0.01"} 1
ratelimit_store_duration_seconds_bucket{result="error",le="+Inf"} 1
ratelimit_store_duration_seconds_sum{result="error"} 0.0005
ratelimit_store_duration_seconds_count{result="error"} 1
ratelimit_store_duration_seconds_bucket{result="ok",le="0.001"} 1
ratelimit_store_duration_seconds_bucket{result="ok",le="0.01"} 2
ratelimit_store_duration_seconds_bucket{result="ok",le="+Inf"} 2
ratelimit_store_duration_seconds_sum{result="ok"} 0.00425
ratelimit_store_duration_seconds_count{result="ok"} 2
ratelimit_store_duration_seconds_bucket{result="unavailable",le="0.001"} 0
ratelimit_store_duration_seconds_bucket{result="unavailable",le="0.01"} 0
ratelimit_store_duration_seconds_bucket{result="unavailable",le="+Inf"} 1
ratelimit_store_duration_seconds_sum{result="unavailable"} 0.05
ratelimit_store_duration_seconds_count{result="unavailable"} 1
`
	assert.Equal(t, expect(want), collectText(t, metrics, "ratelimit_store_duration_seconds"))
}

func TestInstrumentStoreThroughALimiter(t *testing.T) {
	clk := storetest.NewClock()
	metrics := ratelimitprom.MustNew()
	l, err := core.NewLimiter(metrics.InstrumentStore(newMemstore(t, clk)),
		core.WithLimits(core.PerSecond(1)), core.WithDenyCache(10), core.WithObserver(metrics))
	require.NoError(t, err)

	takeN(t, l, "", "c", 5) // one admitted, one denied by the store, three by the deny cache

	assert.Equal(t, 1, countSeries(t, metrics, "ratelimit_store_duration_seconds"))
	families := gather(t, metrics, "ratelimit_store_duration_seconds")
	require.Len(t, families, 1)
	assert.Equal(t, uint64(2), families[0].GetMetric()[0].GetHistogram().GetSampleCount(),
		"only the calls that reached the store")
}

func TestStoreResult(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"no error", context.Background(), nil, ratelimitprom.StoreOK},
		{"wraps ErrStoreUnavailable", context.Background(), fmt.Errorf("x: %w", core.ErrStoreUnavailable), ratelimitprom.StoreUnavailable},
		{"deadline passed", expired, errors.New("i/o timeout"), ratelimitprom.StoreUnavailable},
		{"script error", context.Background(), errors.New("ERR user_script:1"), ratelimitprom.StoreError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ratelimitprom.StoreResult(tt.ctx, tt.err))
		})
	}
}

// shardedStore is a sharded store ([core.Capabilities].Shard) whose every
// key is on shard.
type shardedStore struct {
	core.Store
	shard string
}

func (s shardedStore) Capabilities() core.Capabilities {
	return core.Capabilities{Shard: func(string) string { return s.shard }}
}

// localShardedStore is both sharded and NonBlocking.
type localShardedStore struct{ shardedStore }

func (s localShardedStore) Capabilities() core.Capabilities {
	c := s.shardedStore.Capabilities()
	c.NonBlocking = true
	return c
}

func TestInstrumentStoreKeepsTheKindOfStore(t *testing.T) {
	mem := newMemstore(t, storetest.NewClock())
	tests := []struct {
		name      string
		store     core.Store
		local     bool
		wantShard string // "" when the store is not sharded
	}{
		{"plain store", &switchStore{next: mem}, false, ""},
		{"NonBlocking memstore", mem, true, ""},
		{"Sharded store", shardedStore{Store: mem, shard: "10.0.0.1:7000"}, false, "10.0.0.1:7000"},
		{"NonBlocking and Sharded store", localShardedStore{shardedStore{Store: mem, shard: "a"}}, true, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ratelimitprom.MustNew().InstrumentStore(tt.store)

			caps := core.CapabilitiesOf(s)
			assert.Equal(t, tt.local, caps.NonBlocking, "NonBlocking")
			sharded := caps.Shard != nil
			require.Equal(t, tt.wantShard != "", sharded, "Shard")
			if sharded {
				assert.Equal(t, tt.wantShard, caps.Shard("rl:{client}:limit"))
			}
		})
	}
}

func TestInstrumentStoreForwardsLeases(t *testing.T) {
	clk := storetest.NewClock()
	metrics := ratelimitprom.MustNew()
	l, err := core.NewLimiter(metrics.InstrumentStore(newMemstore(t, clk)), core.WithLimits(core.Concurrent(1)))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := l.Allow(ctx, "c")
	require.NoError(t, err)
	require.NotNil(t, res.Lease)
	denied, err := l.Allow(ctx, "c")
	require.NoError(t, err)
	assert.False(t, denied.Allowed, "the lease is held through the wrapper")
	require.NoError(t, l.Release(ctx, res))
	again, err := l.Allow(ctx, "c")
	require.NoError(t, err)
	assert.True(t, again.Allowed, "and released through it")
	require.NoError(t, l.Renew(ctx, again))
	families := gather(t, metrics, "ratelimit_store_duration_seconds")
	require.Len(t, families, 1)
	assert.Equal(t, uint64(3), families[0].GetMetric()[0].GetHistogram().GetSampleCount(), "TakeLease is timed like Take")

	over := metrics.InstrumentStore(slowStore{clk: clk}).(core.Leaser)
	_, err = over.TakeLease(ctx, nil, []string{"k"}, []core.Limit{core.Concurrent(1)}, 1, "id")
	assert.ErrorContains(t, err, "does not implement core.Leaser")
	assert.ErrorContains(t, over.Release(ctx, "k", core.Concurrent(1), "id"), "does not implement core.Leaser")
}

// A timed store has exactly the capabilities of what it wraps: over a
// store that cannot hold leases, NewLimiter refuses a Concurrency limit at
// start-up, as it does over the bare store, instead of failing every
// request with a 500.
func TestInstrumentStoreOverANonLeaserRefusesConcurrency(t *testing.T) {
	clk := storetest.NewClock()
	metrics := ratelimitprom.MustNew()
	tests := []struct {
		name  string
		store core.Store
	}{
		{"bare", slowStore{clk: clk}},
		{"instrumented", metrics.InstrumentStore(slowStore{clk: clk})},
		{"instrumented twice", metrics.InstrumentStore(metrics.InstrumentStore(slowStore{clk: clk}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := core.NewLimiter(tt.store, core.WithLimits(core.Concurrent(2)))
			require.Error(t, err)
			assert.ErrorContains(t, err, "does not implement core.Leaser")
		})
	}
	_, err := core.NewLimiter(metrics.InstrumentStore(newMemstore(t, clk)), core.WithLimits(core.Concurrent(2)))
	assert.NoError(t, err, "over a store that holds leases, it is accepted")
}
