package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// TestOneLimitProgramsMatchJoined runs random takes of one limit of each
// algorithm through the algorithm's own program (as Store.Take sends a
// take of one limit) on one key and through the program "take" on
// another, at the same test-clock instants (steps back included), and
// checks that both programs reply the same and leave the same state: the
// same value and the same expiry, recorded on the test clock
// (NewWithTestClockExpiry). Sliding log keys start, in some runs, with
// members of the layout before runs, or with runs numbered out of order,
// the rare paths of that program.
func TestOneLimitProgramsMatchJoined(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	ctx := context.Background()
	algorithms := []core.Algorithm{core.GCRA, core.TokenBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog}
	for _, a := range algorithms {
		t.Run(a.String(), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, uint64(a)))
			clock := storetest.NewClock()
			store, err := redisstore.NewWithTestClockExpiry(client, clock.Now)
			require.NoError(t, err)
			kb := newKeyBuilder(t, client)
			for run := range 20 {
				limit := randomLimit(rng, a)
				limits := []core.Limit{limit}
				require.Equal(t, "take_"+a.String(), redisstore.ProgramOf(store, limits))
				lean := kb.AppendKeys(nil, fmt.Sprintf("lean-%d", run), limits)
				joined := kb.AppendKeys(nil, fmt.Sprintf("joined-%d", run), limits)
				if a == core.SlidingLog && run%3 != 0 {
					seedLog(t, client, rng, clock.Now(), limit, lean[0], joined[0])
				}
				for i := range 60 {
					clock.Advance(randomStep(rng, limit.Period))
					cost := rng.Int64N(limit.Capacity() + 2)
					if rng.IntN(3) == 0 {
						cost = 1 // left out of ARGV
					}
					got, err := store.Take(ctx, nil, lean, limits, cost)
					require.NoError(t, err)
					want, err := redisstore.TakeJoined(ctx, store, joined, limits, cost)
					require.NoError(t, err)
					require.Equal(t, outcomesOf(want), outcomesOf(got), "run %d take %d: %v cost %d", run, i, limit, cost)
					require.Equal(t, keyState(t, client, joined[0]), keyState(t, client, lean[0]), "run %d take %d: state", run, i)
				}
			}
		})
	}
}

// randomLimit returns a limit of algorithm a with a small rate, a period
// from 1 ms to 1 minute, and for GCRA and the token bucket a burst.
func randomLimit(rng *rand.Rand, a core.Algorithm) core.Limit {
	periods := []time.Duration{time.Millisecond, 7 * time.Millisecond, time.Second, 3 * time.Second, time.Minute}
	l := core.Limit{Rate: 1 + rng.Int64N(12), Period: periods[rng.IntN(len(periods))], Algorithm: a}
	if (a == core.GCRA || a == core.TokenBucket) && rng.IntN(3) != 0 {
		l.Burst = 1 + rng.Int64N(20) // else the rate: the capacity is left out of ARGV
	}
	return l
}

// randomStep is how far the clock moves before a take: mostly forward by
// up to 1.5 periods in µs, sometimes not at all, sometimes back.
func randomStep(rng *rand.Rand, period time.Duration) time.Duration {
	switch rng.IntN(10) {
	case 0:
		return 0
	case 1:
		return -time.Duration(rng.Int64N(int64(period)/2 + 1)).Truncate(time.Microsecond)
	}
	return time.Duration(rng.Int64N(int64(period)*3/2 + 1)).Truncate(time.Microsecond)
}

// seedLog writes the same sliding log members to both keys: members of the
// layout before runs ("<time>:<i>", one unit each), then either runs
// numbered in order or runs numbered out of order.
func seedLog(t *testing.T, client *redis.Client, rng *rand.Rand, now time.Time, limit core.Limit, keys ...string) {
	t.Helper()
	at := now.UnixMicro() - time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var members []redis.Z
	old := rng.IntN(int(limit.Rate) + 1)
	for i := range old {
		members = append(members, redis.Z{Score: float64(at - int64(old-i)), Member: fmt.Sprintf("%d:%d", at-int64(old-i), i)})
	}
	u := int64(rng.IntN(5))
	for i := range rng.IntN(int(limit.Rate) + 1) {
		c := 1 + rng.Int64N(2)
		if rng.IntN(4) == 0 {
			u -= 3 // out of order
		} else {
			u += c
		}
		members = append(members, redis.Z{Score: float64(at + int64(i)), Member: fmt.Sprintf("r%d:%d", max(u, 1), c)})
	}
	if len(members) == 0 {
		return
	}
	for _, key := range keys {
		require.NoError(t, client.ZAdd(context.Background(), key, members...).Err())
		require.NoError(t, client.PExpire(context.Background(), key, 10*time.Minute).Err())
	}
}

// keyState is what a program left at key: its value whatever the type,
// and the expiry NewWithTestClockExpiry recorded on the test clock.
func keyState(t *testing.T, client *redis.Client, key string) [2]string {
	t.Helper()
	ctx := context.Background()
	typ, err := client.Type(ctx, key).Result()
	require.NoError(t, err)
	var value string
	switch typ {
	case "none":
	case "string":
		value = client.Get(ctx, key).Val()
	case "hash":
		value = fmt.Sprint(client.HGetAll(ctx, key).Val())
	case "zset":
		value = fmt.Sprint(client.ZRangeWithScores(ctx, key, 0, -1).Val())
	default:
		t.Fatalf("key %q is a %s", key, typ)
	}
	expiry, err := client.Get(ctx, key+"|expiry").Result()
	if err == redis.Nil {
		expiry = ""
	} else {
		require.NoError(t, err)
	}
	return [2]string{typ + " " + value, expiry}
}

func TestScriptsNameEveryProgram(t *testing.T) {
	scripts := redisstore.Scripts()
	var names []string
	for _, s := range scripts {
		names = append(names, s.Name)
		assert.NotEmpty(t, s.Source, s.Name)
		assert.Len(t, s.SHA1, 40, s.Name)
	}
	assert.Equal(t, []string{"take_gcra", "take_token_bucket", "take_fixed_window", "take_sliding_window", "take_sliding_log", "take", "lease", "control"}, names)
}

// TestProgramsAsDocumented calls each program the way
// docs/redis-protocol.md tells another language to: its source from
// Scripts, ARGV in the short and the long form, and checks the reply
// against Store.Take of the same limit on a key of its own.
func TestProgramsAsDocumented(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	store, kb := newStore(t, client)
	ctx := context.Background()
	programs := map[string]*redis.Script{}
	for _, s := range redisstore.Scripts() {
		programs[s.Name] = redis.NewScript(s.Source)
	}
	minute := int64(time.Minute / time.Microsecond)
	tests := []struct {
		program string
		limits  []core.Limit
		cost    int64
		args    []any
	}{
		{"take_gcra", []core.Limit{core.PerMinute(10)}, 1, []any{10, minute}},
		{"take_gcra", []core.Limit{core.PerMinute(10).WithBurst(20)}, 3, []any{10, minute, 20, 3}},
		{"take_token_bucket", []core.Limit{core.PerMinute(10).WithAlgorithm(core.TokenBucket)}, 1, []any{10, minute}},
		{"take_token_bucket", []core.Limit{core.PerMinute(10).WithAlgorithm(core.TokenBucket)}, 0, []any{10, minute, 10, 0}},
		{"take_fixed_window", []core.Limit{core.PerMinute(10).WithAlgorithm(core.FixedWindow)}, 1, []any{10, minute}},
		{"take_sliding_window", []core.Limit{core.PerMinute(10).WithAlgorithm(core.SlidingWindow)}, 4, []any{10, minute, 4}},
		{"take_sliding_log", []core.Limit{core.PerMinute(10).WithAlgorithm(core.SlidingLog)}, 11, []any{10, minute, 11}},
		{"take", []core.Limit{core.PerMinute(10), core.PerMinute(5).WithAlgorithm(core.SlidingWindow)}, 2,
			[]any{"", 2, 0, 10, minute, 10, 3, 5, minute, 5}},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%s%v", tt.program, tt.args), func(t *testing.T) {
			want, err := store.Take(ctx, nil, kb.AppendKeys(nil, fmt.Sprintf("store-%d", i), tt.limits), tt.limits, tt.cost)
			require.NoError(t, err)
			reply, err := programs[tt.program].Run(ctx, client, kb.AppendKeys(nil, fmt.Sprintf("other-%d", i), tt.limits), tt.args...).Int64Slice()
			require.NoError(t, err)
			require.Len(t, reply, 5*len(tt.limits))
			for j, d := range want {
				r := reply[5*j:]
				assert.Equal(t, []int64{b2i(d.Allowed), int64(d.Reason), d.Remaining}, r[:3], "limit %d: allowed, reason, remaining", j)
				// reset_after and retry_after depend on the instant of the
				// take (window algorithms): within the second between the two.
				assert.InDelta(t, d.ResetAfter.Microseconds(), r[3], 1e6, "limit %d: reset_after", j)
				assert.InDelta(t, d.RetryAfter.Microseconds(), r[4], 1e6, "limit %d: retry_after", j)
			}
		})
	}
}

// TestLeaseProgramsAsDocumented takes a concurrency limit through the
// program "take" with the lease id last, as docs/redis-protocol.md tells
// another language to, checks the reply against Store.TakeLease of the
// same limit on a key of its own, and releases the lease with the program
// "lease": held the first time, not the second.
func TestLeaseProgramsAsDocumented(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	store, kb := newStore(t, client)
	ctx := context.Background()
	programs := map[string]*redis.Script{}
	for _, s := range redisstore.Scripts() {
		programs[s.Name] = redis.NewScript(s.Source)
	}
	limits := []core.Limit{core.Concurrent(2)}
	require.Equal(t, "take", redisstore.ProgramOf(store, limits), "a take of one concurrency limit runs take")
	ttl := core.DefaultLeaseTTL.Microseconds()
	want, err := store.TakeLease(ctx, nil, kb.AppendKeys(nil, "store", limits), limits, 1, "lease-store")
	require.NoError(t, err)
	keys := kb.AppendKeys(nil, "other", limits)
	reply, err := programs["take"].Run(ctx, client, keys, "", 1, 6, 2, ttl, 2, "lease-other").Int64Slice()
	require.NoError(t, err)
	require.Len(t, reply, 5)
	assert.Equal(t, []int64{b2i(want[0].Allowed), int64(want[0].Reason), want[0].Remaining}, reply[:3], "allowed, reason, remaining")
	assert.InDelta(t, want[0].ResetAfter.Microseconds(), reply[3], 1e6, "reset_after")
	held, err := client.ZScore(ctx, keys[0], "lease-other").Result()
	require.NoError(t, err, "the lease is held under its id")
	assert.Positive(t, held)
	for _, wantHeld := range []int64{1, 0} {
		got, err := programs["lease"].Run(ctx, client, keys[:1], "", "lease-other", 0).Int64Slice()
		require.NoError(t, err)
		assert.Equal(t, []int64{wantHeld}, got, "release")
	}
	n, err := client.Exists(ctx, keys[0]).Result()
	require.NoError(t, err)
	assert.Zero(t, n, "the key went with its last lease")
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
