package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// commandCalls returns the calls of every command from INFO commandstats.
func commandCalls(t *testing.T, client *redis.Client) map[string]int64 {
	t.Helper()
	info, err := client.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	calls := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, field := range strings.Split(stats, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
				calls[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return calls
}

// A commandCounter is a go-redis hook counting the commands a client sends.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestOneCommandPerTake counts, for n takes of five limits with five
// algorithms, the commands the client sends and the EVALSHA calls a
// dedicated server executes: exactly one each per take, denials included.
// (commandstats also counts the commands run inside the script, so the
// client-side count is the one that covers every command.)
func TestOneCommandPerTake(t *testing.T) {
	client := redistest.Dedicated(t).Client(t)
	store, kb := newStore(t, client)
	ctx := context.Background()
	limits := []core.Limit{
		core.PerSecond(1000).WithName("gcra"),
		core.PerSecond(1000).WithName("bucket").WithAlgorithm(core.TokenBucket),
		core.PerSecond(5).WithName("fixed").WithAlgorithm(core.FixedWindow),
		core.PerSecond(1000).WithName("sliding").WithAlgorithm(core.SlidingWindow),
		core.PerSecond(1000).WithName("log").WithAlgorithm(core.SlidingLog),
	}
	keys := kb.AppendKeys(nil, "client", limits)
	_, err := store.Take(ctx, nil, keys, limits, 1) // loads the script
	require.NoError(t, err)
	var sent commandCounter
	client.AddHook(&sent)
	const n = 20 // more than the fixed window admits: denials count too

	before := commandCalls(t, client)
	sent.n.Store(0)
	for range n {
		_, err := store.Take(ctx, nil, keys, limits, 1)
		require.NoError(t, err)
	}
	commands := sent.n.Load()
	after := commandCalls(t, client)

	assert.Equal(t, int64(n), commands, "commands sent")
	assert.Equal(t, int64(n), after["evalsha"]-before["evalsha"], "EVALSHA calls")
	assert.Equal(t, before["eval"], after["eval"], "EVAL calls")
}

// TestTakeAfterScriptFlush: a server that lost its script cache (SCRIPT
// FLUSH, restart, failover) gets the script again through EVAL.
func TestTakeAfterScriptFlush(t *testing.T) {
	client := redistest.Dedicated(t).Client(t)
	store, kb := newStore(t, client)
	ctx := context.Background()
	limits := []core.Limit{core.PerMinute(3)}
	keys := kb.AppendKeys(nil, "client", limits)
	_, err := store.Take(ctx, nil, keys, limits, 1)
	require.NoError(t, err)

	require.NoError(t, client.ScriptFlush(ctx).Err())
	before := commandCalls(t, client)
	got, err := store.Take(ctx, nil, keys, limits, 1)
	after := commandCalls(t, client)

	require.NoError(t, err)
	assert.True(t, got[0].Allowed)
	assert.Equal(t, int64(1), got[0].Remaining, "the state survived the flush")
	assert.Equal(t, int64(1), after["eval"]-before["eval"], "one EVAL after the NOSCRIPT")
}

// TestGCRAKeyMemory pins the memory of one client's GCRA state with the
// default key layout: MEMORY USAGE counts bytes, it is not a timing.
func TestGCRAKeyMemory(t *testing.T) {
	client := redistest.Dedicated(t).Client(t)
	ctx := context.Background()
	store, _ := newStore(t, client)
	kb, err := core.NewKeyBuilder("rl") // the default prefix: fine on a dedicated server
	require.NoError(t, err)
	t.Cleanup(func() { assertKeysExpire(t, client, "rl") })
	limits := []core.Limit{core.PerSecond(10)}
	keys := kb.AppendKeys(nil, "203.0.113.7", limits)
	require.Equal(t, "rl:{203.0.113.7}:10-per-1s:g", keys[0])
	_, err = store.Take(ctx, nil, keys, limits, 1)
	require.NoError(t, err)

	bytes, err := client.MemoryUsage(ctx, keys[0]).Result()

	require.NoError(t, err)
	t.Logf("MEMORY USAGE %s = %d bytes", keys[0], bytes)
	assert.LessOrEqual(t, bytes, int64(100))
}

// TestCalendarKeyMemory pins the memory of one client's calendar window
// state (a hash of two integers) with the default key layout.
func TestCalendarKeyMemory(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	client := redistest.Dedicated(t).Client(t)
	ctx := context.Background()
	store, _ := newStore(t, client)
	kb, err := core.NewKeyBuilder("rl")
	require.NoError(t, err)
	t.Cleanup(func() { assertKeysExpire(t, client, "rl") })
	limits := []core.Limit{core.PerCalendarMonth(10_000, madrid)}
	keys := kb.AppendKeys(nil, "203.0.113.7", limits)
	require.Equal(t, "rl:{203.0.113.7}:10000-per-month-Europe.Madrid:c", keys[0])
	_, err = store.Take(ctx, nil, keys, limits, 1)
	require.NoError(t, err)

	bytes, err := client.MemoryUsage(ctx, keys[0]).Result()

	require.NoError(t, err)
	t.Logf("MEMORY USAGE %s = %d bytes", keys[0], bytes)
	assert.LessOrEqual(t, bytes, int64(160))
}
