package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// A step is one take at a test-clock instant and the decision it must get.
type step struct {
	at   time.Duration
	cost int64
	want outcome
}

const ms = time.Millisecond

func allowed(remaining int64, reset time.Duration) outcome {
	return outcome{Allowed: true, Remaining: remaining, ResetAfter: reset}
}

func exhausted(remaining int64, reset, retry time.Duration) outcome {
	return outcome{Reason: core.Exhausted, Remaining: remaining, ResetAfter: reset, RetryAfter: retry}
}

func costTooHigh(remaining int64, reset time.Duration) outcome {
	return outcome{Reason: core.CostTooHigh, Remaining: remaining, ResetAfter: reset}
}

// bucketSteps hold for GCRA and the token bucket alike (docs/algorithms.md:
// the same machine in two coordinates), at 10 per second: T = 100 ms.
var bucketSteps = []step{
	{0, 10, allowed(0, 1000*ms)},
	{0, 1, exhausted(0, 1000*ms, 100*ms)},
	{50 * ms, 1, exhausted(0, 950*ms, 50*ms)},
	{100 * ms, 1, allowed(0, 1000*ms)},
	{100 * ms, 0, allowed(0, 1000*ms)},
	{100 * ms, 11, costTooHigh(0, 1000*ms)},
	{450 * ms, 0, allowed(3, 650*ms)},
	{450 * ms, 4, exhausted(3, 650*ms, 50*ms)},
	{1100 * ms, 0, allowed(10, 0)},
}

func TestTakeSequences(t *testing.T) {
	tests := []struct {
		name  string
		limit core.Limit
		steps []step
	}{
		{"GCRA 10/s", core.PerSecond(10), bucketSteps},
		{"TokenBucket 10/s", core.PerSecond(10).WithAlgorithm(core.TokenBucket), bucketSteps},
		{"GCRA 2/s burst 4", core.PerSecond(2).WithBurst(4), []step{
			{0, 4, allowed(0, 2000*ms)},
			{0, 1, exhausted(0, 2000*ms, 500*ms)},
			{1000 * ms, 1, allowed(1, 1500*ms)},
		}},
		{"FixedWindow 3/s", core.PerSecond(3).WithAlgorithm(core.FixedWindow), []step{
			{0, 0, allowed(3, 0)},
			{0, 1, allowed(2, 1000*ms)},
			{500 * ms, 2, allowed(0, 500*ms)},
			{500 * ms, 1, exhausted(0, 500*ms, 500*ms)},
			{999 * ms, 4, costTooHigh(0, 1*ms)},
			{1000 * ms, 3, allowed(0, 1000*ms)},
		}},
		{"SlidingWindow 4/s", core.PerSecond(4).WithAlgorithm(core.SlidingWindow), []step{
			{0, 4, allowed(0, 2000*ms)},
			{500 * ms, 1, exhausted(0, 1500*ms, 750*ms)},
			{1250 * ms, 0, allowed(1, 750*ms)},
			{1250 * ms, 1, allowed(0, 1750*ms)},
			{1250 * ms, 1, exhausted(0, 1750*ms, 250*ms)},
			{1500 * ms, 1, allowed(0, 1500*ms)},
			{1500 * ms, 5, costTooHigh(0, 1500*ms)},
		}},
		{"SlidingLog 3/s", core.PerSecond(3).WithAlgorithm(core.SlidingLog), []step{
			{0, 1, allowed(2, 1000*ms)},
			{400 * ms, 2, allowed(0, 1000*ms)},
			{500 * ms, 1, exhausted(0, 900*ms, 500*ms)},
			{1000 * ms, 1, allowed(0, 1000*ms)},
			{1000 * ms, 1, exhausted(0, 1000*ms, 400*ms)},
			{1000 * ms, 4, costTooHigh(0, 1000*ms)},
			{2000 * ms, 0, allowed(3, 0)},
		}},
		{"SlidingLog 5/s, one microsecond", core.PerSecond(5).WithAlgorithm(core.SlidingLog), []step{
			{0, 1, allowed(4, 1000*ms)},
			{0, 1, allowed(3, 1000*ms)},
			{0, 2, allowed(1, 1000*ms)},
			{0, 1, allowed(0, 1000*ms)},
			{0, 1, exhausted(0, 1000*ms, 1000*ms)},
		}},
	}
	for _, b := range backends {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				clk := storetest.NewClock()
				store, kb := newStore(t, b.client(t), redisstore.WithClock(clk.Now))
				limits := []core.Limit{tt.limit}
				keys := kb.AppendKeys(nil, "client", limits)

				for i, st := range tt.steps {
					clk.SetOffset(st.at)
					got, err := store.Take(context.Background(), nil, keys, limits, st.cost)
					require.NoError(t, err)
					require.Len(t, got, 1)
					assert.Equal(t, st.want, outcomeOf(got[0]), "step %d: Take(cost=%d) at %s", i, st.cost, st.at)
					assert.Equal(t, tt.limit, got[0].Limit)
				}
			})
		}
	}
}

func TestTakeIsAllOrNothing(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			clk := storetest.NewClock()
			store, kb := newStore(t, b.client(t), redisstore.WithClock(clk.Now))
			limits := []core.Limit{
				core.PerSecond(10).WithName("gcra"),
				core.PerSecond(10).WithName("bucket").WithAlgorithm(core.TokenBucket),
				core.PerSecond(2).WithName("fixed").WithAlgorithm(core.FixedWindow),
				core.PerSecond(10).WithName("sliding").WithAlgorithm(core.SlidingWindow),
				core.PerSecond(10).WithName("log").WithAlgorithm(core.SlidingLog),
			}
			keys := kb.AppendKeys(nil, "client", limits)
			take := func(cost int64) []outcome {
				t.Helper()
				got, err := store.Take(context.Background(), nil, keys, limits, cost)
				require.NoError(t, err)
				return outcomesOf(got)
			}

			take(2)
			denied := take(1)
			peek := take(0)

			assert.Equal(t, []outcome{
				allowed(8, 200*ms), allowed(8, 200*ms), exhausted(0, 1000*ms, 1000*ms),
				allowed(8, 2000*ms), allowed(8, 1000*ms),
			}, denied, "the fixed window denies; the others would admit, and report their state before the charge")
			assert.Equal(t, []outcome{
				allowed(8, 200*ms), allowed(8, 200*ms), allowed(0, 1000*ms),
				allowed(8, 2000*ms), allowed(8, 1000*ms),
			}, peek, "the denied take charged nothing")
		})
	}
}

func TestTakeAppendsToDst(t *testing.T) {
	store, kb := newStore(t, backends[0].client(t))
	limits := []core.Limit{core.PerMinute(5)}
	dst := make([]core.Decision, 1, 4)

	got, err := store.Take(context.Background(), dst, kb.AppendKeys(nil, "client", limits), limits, 1)

	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, core.Decision{}, got[0])
	assert.Equal(t, int64(4), got[1].Remaining)
}

func TestTakeRejectsBadArguments(t *testing.T) {
	store, kb := newStore(t, backends[0].client(t))
	one := []core.Limit{core.PerSecond(1)}
	tests := []struct {
		name   string
		keys   []string
		limits []core.Limit
		cost   int64
	}{
		{"no limits", nil, nil, 1},
		{"more keys than limits", []string{"a", "b"}, one, 1},
		{"more limits than keys", nil, one, 1},
		{"negative cost", kb.AppendKeys(nil, "c", one), one, -1},
		{"zero rate", []string{"a"}, []core.Limit{{Period: time.Second}}, 1},
		{"sub-microsecond period", []string{"a"}, []core.Limit{{Rate: 1, Period: time.Nanosecond}}, 1},
		{"unknown algorithm", []string{"a"}, []core.Limit{core.PerSecond(1).WithAlgorithm(core.Algorithm(9))}, 1},
		{"calendar without a location", []string{"a"}, []core.Limit{core.PerCalendarDay(1, nil)}, 1},
		{"calendar without a unit", []string{"a"}, []core.Limit{{Rate: 1, Period: 24 * time.Hour, Algorithm: core.CalendarWindow,
			Calendar: core.Calendar{Location: time.UTC}}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []core.Decision{{Remaining: 7}}

			got, err := store.Take(context.Background(), dst, tt.keys, tt.limits, tt.cost)

			require.Error(t, err)
			assert.Regexp(t, "^ratelimit: redis take: ", err.Error())
			assert.Equal(t, dst, got, "dst is returned unchanged")
		})
	}
}

func TestNewRejectsNilClient(t *testing.T) {
	_, err := redisstore.New(nil)

	assert.EqualError(t, err, "ratelimit: redisstore: nil client")
}

func TestTakeWrapsRedisErrors(t *testing.T) {
	client := backends[0].client(t)
	store, kb := newStore(t, client)
	limits := []core.Limit{core.PerSecond(1)}
	keys := kb.AppendKeys(nil, "client", limits)
	require.NoError(t, client.LPush(context.Background(), keys[0], "x").Err())
	require.NoError(t, client.PExpire(context.Background(), keys[0], time.Minute).Err())

	_, err := store.Take(context.Background(), nil, keys, limits, 1)

	require.Error(t, err)
	assert.Contains(t, err.Error(), "ratelimit: redis take: ")
	assert.Contains(t, err.Error(), "WRONGTYPE")
}

// TestTakeThroughRing: any client that runs scripts will do, a *redis.Ring
// included (standalone and cluster clients run every other test).
func TestTakeThroughRing(t *testing.T) {
	srv := redistest.Standalone(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"only": srv.Addr()}})
	t.Cleanup(func() { _ = ring.Close() })
	store, kb := newStore(t, ring)
	limits := []core.Limit{core.PerMinute(2), core.PerHour(5).WithAlgorithm(core.SlidingLog)}
	keys := kb.AppendKeys(nil, "client", limits)

	got, err := store.Take(context.Background(), nil, keys, limits, 1)

	require.NoError(t, err)
	assert.Equal(t, []outcome{allowed(1, 30*time.Second), allowed(4, time.Hour)}, outcomesOf(got))
}

// TestTakeThroughAPlainScripter: a client that offers nothing but
// redis.Scripter (no Process, as a wrapper might) runs takes through
// Script.Run, EVAL after the script cache was flushed included.
func TestTakeThroughAPlainScripter(t *testing.T) {
	client := redistest.Dedicated(t).Client(t)
	store, err := redisstore.New(scripterOnly{client}, redisstore.WithLogger(nil))
	require.NoError(t, err)
	kb := newKeyBuilder(t, client)
	tests := []struct {
		name   string
		limits []core.Limit
		want   []outcome
	}{
		{"one-limit", []core.Limit{core.PerMinute(2)}, []outcome{allowed(1, 30*time.Second)}},
		{"two-limits", []core.Limit{core.PerMinute(2), core.PerHour(5).WithAlgorithm(core.SlidingLog)},
			[]outcome{allowed(1, 30*time.Second), allowed(4, time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			keys := kb.AppendKeys(nil, tt.name, tt.limits)
			require.NoError(t, client.ScriptFlush(ctx).Err())

			got, err := store.Take(ctx, nil, keys, tt.limits, 1)

			require.NoError(t, err)
			assert.Equal(t, tt.want, outcomesOf(got))
		})
	}
}

// scripterOnly hides every method of its client but redis.Scripter's.
type scripterOnly struct{ redis.Scripter }

// TestLoweredRateRemainingIsNeverNegative: a limit whose rate is lowered
// while its key is live finds more requests counted than its new rate.
func TestLoweredRateRemainingIsNeverNegative(t *testing.T) {
	for _, a := range []core.Algorithm{core.FixedWindow, core.SlidingLog} {
		t.Run(a.String(), func(t *testing.T) {
			clk := storetest.NewClock()
			store, kb := newStore(t, backends[0].client(t), redisstore.WithClock(clk.Now))
			before := []core.Limit{core.PerMinute(5).WithName("quota").WithAlgorithm(a)}
			after := []core.Limit{core.PerMinute(2).WithName("quota").WithAlgorithm(a)}
			keys := kb.AppendKeys(nil, "client", before)
			_, err := store.Take(context.Background(), nil, keys, before, 5)
			require.NoError(t, err)

			got, err := store.Take(context.Background(), nil, keys, after, 1)

			require.NoError(t, err)
			assert.False(t, got[0].Allowed)
			assert.Equal(t, int64(0), got[0].Remaining)
		})
	}
}
