package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// epochMicros is the script's time of storetest.Start() + offset: µs since
// 2024-01-01T00:00:00Z.
func epochMicros(offset time.Duration) int64 {
	return keylayout.EpochMicros(storetest.Start().Add(offset))
}

// A take of the sliding log stores one run, whatever its cost: the review
// found a take of cost 300,000 running 432 ms inside Redis (one member per
// unit, 37 MB in one key) while every other decision waited. Both programs
// that take a sliding log: its own, for a take of one limit, and "take",
// for a client with several limits.
func TestSlidingLogTakeOfAnyCostStoresOneRun(t *testing.T) {
	tests := []struct {
		name    string
		limit   core.Limit
		cost    int64
		others  []core.Limit // more limits of the client, after the log
		program string       // the program the take runs
	}{
		{"the review's 300,000 per hour", core.PerHour(300_000), 300_000, nil, "take_sliding_log"},
		{"the largest limit, at once", core.Limit{Rate: 1 << 40, Period: 366 * 24 * time.Hour}, 1 << 40, nil, "take_sliding_log"},
		{"300,000 per hour beside a bucket", core.PerHour(300_000), 300_000,
			[]core.Limit{core.PerHour(300_000).WithName("bucket")}, "take"},
	}
	client := redistest.Dedicated(t).Client(t)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := storetest.NewClock()
			store, kb := newStore(t, client, redisstore.WithClock(clk.Now))
			limits := append([]core.Limit{tt.limit.WithAlgorithm(core.SlidingLog)}, tt.others...)
			keys := kb.AppendKeys(nil, "client", limits)
			require.Equal(t, tt.program, redisstore.ProgramOf(store, limits))

			begin := time.Now()
			got, err := store.Take(ctx, nil, keys, limits, tt.cost)
			took := time.Since(begin)

			require.NoError(t, err)
			assert.Equal(t, allowed(0, tt.limit.Period), outcomeOf(got[0]))
			members, err := client.ZCard(ctx, keys[0]).Result()
			require.NoError(t, err)
			assert.Equal(t, int64(1), members, "members")
			bytes, err := client.MemoryUsage(ctx, keys[0]).Result()
			require.NoError(t, err)
			t.Logf("cost %d: one take in %v, MEMORY USAGE %d bytes", tt.cost, took, bytes)
			assert.LessOrEqual(t, bytes, int64(200), "MEMORY USAGE")

			clk.Advance(time.Second)
			got, err = store.Take(ctx, nil, keys, limits, 1)
			require.NoError(t, err)
			assert.Equal(t, exhausted(0, tt.limit.Period-time.Second, tt.limit.Period-time.Second), outcomeOf(got[0]),
				"the run counts cost units")
		})
	}
}

// Keys written before runs hold one member "<time>:<i>" per unit. They
// expire within one period of the deploy; until then the script counts a
// member it cannot parse as one unit, never fails on it, and counts the
// runs it writes after them exactly.
func TestSlidingLogReadsTheLayoutBeforeRuns(t *testing.T) {
	fiveIn10s := core.Limit{Rate: 5, Period: 10 * time.Second, Algorithm: core.SlidingLog}
	sec := time.Second
	type member struct {
		at   time.Duration
		name string // "" is the old layout's "<time>:<i>", i from 0
	}
	tests := []struct {
		name    string
		members []member
		steps   []step
	}{
		{
			name:    "old members only: one unit each",
			members: []member{{0, ""}, {0, ""}, {sec, ""}},
			steps: []step{
				{2 * sec, 0, allowed(2, 9*sec)},
				{2 * sec, 1, allowed(1, 10*sec)},
				// 4 units; a cost of 2 waits for the oldest (0s) to leave.
				{2 * sec, 2, exhausted(1, 10*sec, 8*sec)},
				// (0s, 10s]: the member of 1s and the run of 2s.
				{10 * sec, 0, allowed(3, 2*sec)},
				{12 * sec, 0, allowed(5, 0)},
			},
		},
		{
			name:    "old members, then a run of 3: counted exactly",
			members: []member{{0, ""}, {0, ""}},
			steps: []step{
				{sec, 3, allowed(0, 10*sec)},
				// The oldest units are the old members of 0s...
				{2 * sec, 1, exhausted(0, 9*sec, 8*sec)},
				// ...the third is in the run of 1s.
				{2 * sec, 3, exhausted(0, 9*sec, 9*sec)},
				{10 * sec, 2, allowed(0, 10*sec)},
				{11 * sec, 3, allowed(0, 10*sec)},
			},
		},
		{
			name:    "a member neither layout wrote: one unit",
			members: []member{{0, "hello"}, {0, "r1:x"}},
			steps: []step{
				{sec, 0, allowed(3, 9*sec)},
				{sec, 3, allowed(0, 10*sec)},
				{sec, 1, exhausted(0, 10*sec, 9*sec)},
			},
		},
		{
			// An old node wrote after a new one (a rolling deploy): the
			// newest member is not a run, so every member counts as one unit.
			name:    "an old member after a run: every member one unit",
			members: []member{{0, "r2:2"}, {sec, ""}},
			steps: []step{
				{2 * sec, 0, allowed(3, 9*sec)},
				{2 * sec, 1, allowed(2, 10*sec)},
				// The runs are numbered out of order now: still one unit each.
				{3 * sec, 0, allowed(2, 9*sec)},
				{10 * sec, 0, allowed(3, 2*sec)},
				{12 * sec, 0, allowed(5, 0)},
			},
		},
	}
	client := backends[0].client(t)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := storetest.NewClock()
			store, kb := newStore(t, client, redisstore.WithClock(clk.Now))
			limits := []core.Limit{fiveIn10s}
			keys := kb.AppendKeys(nil, "client", limits)
			for i, m := range tt.members {
				score := epochMicros(m.at)
				name := m.name
				if name == "" {
					name = strconv.FormatInt(score, 10) + ":" + strconv.Itoa(i)
				}
				require.NoError(t, client.ZAdd(ctx, keys[0], redis.Z{Score: float64(score), Member: name}).Err())
			}
			require.NoError(t, client.PExpire(ctx, keys[0], time.Minute).Err())

			for i, st := range tt.steps {
				clk.SetOffset(st.at)
				got, err := store.Take(ctx, nil, keys, limits, st.cost)
				require.NoError(t, err, "step %d", i)
				assert.Equal(t, st.want, outcomeOf(got[0]), "step %d: Take(cost=%d) at %s", i, st.cost, st.at)
			}
		})
	}
}

// After a clock step back (a failover to a server whose clock is behind),
// every key's TTL still covers its state: it is the reset_after the take
// reported, measured from the behind clock. The review found the sliding
// log's TTL one period from the behind clock, so its entries expired 1.5 s
// early and the quota came back.
func TestTTLCoversTheStateAfterAClockStepBack(t *testing.T) {
	tenIn4s := core.Limit{Rate: 10, Period: 4 * time.Second} // T = 400ms
	tests := []struct {
		alg     core.Algorithm
		wantTTL time.Duration // from the reading of 10.5s
	}{
		{core.GCRA, 2300 * ms},          // tat = 12s + 2 × 400ms
		{core.TokenBucket, 2300 * ms},   // full 800ms after ts = 12s
		{core.FixedWindow, 5500 * ms},   // window [12s, 16s)
		{core.SlidingWindow, 9500 * ms}, // both windows past at 20s
		{core.SlidingLog, 5500 * ms},    // the newest entry, at 12s, leaves at 16s
	}
	client := backends[0].client(t)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.alg.String(), func(t *testing.T) {
			clk := storetest.NewClock()
			store, kb := newStore(t, client, redisstore.WithClock(clk.Now))
			limits := []core.Limit{tenIn4s.WithAlgorithm(tt.alg)}
			keys := kb.AppendKeys(nil, "client", limits)
			clk.SetOffset(12 * time.Second)
			_, err := store.Take(ctx, nil, keys, limits, 1)
			require.NoError(t, err)

			clk.SetOffset(10500 * ms) // 1.5s back
			got, err := store.Take(ctx, nil, keys, limits, 1)
			require.NoError(t, err)
			pttl, err := client.PTTL(ctx, keys[0]).Result()
			require.NoError(t, err)

			assert.True(t, got[0].Allowed)
			assert.Equal(t, tt.wantTTL, got[0].ResetAfter, "ResetAfter")
			assert.LessOrEqual(t, pttl, tt.wantTTL, "PTTL")
			assert.Greater(t, pttl, tt.wantTTL-time.Second, "PTTL")
		})
	}
}
