package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestPipelineMixesPrograms sends one pipeline of takes of three programs
// to a server without cached scripts: every take is answered NOSCRIPT and
// resent with its own program, the first of each program as EVAL, and
// each is charged once.
func TestPipelineMixesPrograms(t *testing.T) {
	client := redistest.Dedicated(t).Client(t)
	ctx := context.Background()
	store, err := New(client, WithLogger(nil))
	require.NoError(t, err)
	kb, err := core.NewKeyBuilder(redistest.Prefix(t))
	require.NoError(t, err)
	takes := [][]core.Limit{
		{core.PerMinute(10)},
		{core.PerMinute(10).WithAlgorithm(core.SlidingLog)},
		{core.PerMinute(10)},
		{core.PerMinute(10), core.PerHour(100)},
		{core.PerMinute(10).WithAlgorithm(core.SlidingLog)},
	}
	b := newNodeBatcher(client, client, true)
	var batch []*check
	for i, limits := range takes {
		keys := kb.AppendKeys(nil, "client-"+strconv.Itoa(i), limits)
		p, cmd := store.call(ctx, keys, limits, 1, "")
		batch = append(batch, b.newCheck(ctx, p, cmd, sent))
	}
	require.NoError(t, client.ScriptFlush(ctx).Err())

	b.send(batch[0], batch)

	for i, c := range batch {
		reply, err := c.cmd.Result()
		require.NoError(t, err, "take %d", i)
		ds, err := appendDecisions(nil, takes[i], reply)
		require.NoError(t, err)
		for _, d := range ds {
			assert.True(t, d.Allowed, "take %d", i)
			assert.Equal(t, d.Limit.Rate-1, d.Remaining, "take %d charged once", i)
		}
	}
	calls := map[string]string{}
	info, err := client.Info(ctx, "commandstats").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if name, stats, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			calls[name], _, _ = strings.Cut(stats, ",")
		}
	}
	assert.Equal(t, "calls=3", calls["cmdstat_eval"], "one EVAL per program")
	assert.Equal(t, "calls=7", calls["cmdstat_evalsha"], "five EVALSHA answered NOSCRIPT, two resent")
}
