package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// evalRecorder is a go-redis hook keeping the source of every EVAL and the
// SHA-1 of every EVALSHA a client sends.
type evalRecorder struct {
	mu      sync.Mutex
	sources []string
	hashes  []string
}

func (r *evalRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *evalRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.mu.Lock()
		switch a := cmd.Args(); cmd.Name() {
		case "eval":
			r.sources = append(r.sources, a[1].(string))
		case "evalsha":
			r.hashes = append(r.hashes, a[1].(string))
		}
		r.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (r *evalRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestScriptPrintsWhatTheStoreSends makes a store on a server without
// cached scripts take one limit of each algorithm and two limits,
// release a lease and touch a control, records what it sends (EVALSHA, then EVAL with the
// source on NOSCRIPT), and checks that `ratelimit script NAME` prints each
// program it sent byte for byte and `--sha` the SHA-1 the store named,
// which the server now has.
func TestScriptPrintsWhatTheStoreSends(t *testing.T) {
	client := redistest.Dedicated(t).Client(t)
	ctx := context.Background()
	require.NoError(t, client.ScriptFlush(ctx).Err())
	var rec evalRecorder
	client.AddHook(&rec)
	store, err := redisstore.New(client, redisstore.WithLogger(nil))
	require.NoError(t, err)
	prefix := redistest.Prefix(t)
	kb, err := core.NewKeyBuilder(prefix)
	require.NoError(t, err)
	cleanPrefix(t, client, prefix)
	takes := map[string][]core.Limit{
		"take_gcra":           {core.PerSecond(10)},
		"take_token_bucket":   {core.PerSecond(10).WithAlgorithm(core.TokenBucket)},
		"take_fixed_window":   {core.PerSecond(10).WithAlgorithm(core.FixedWindow)},
		"take_sliding_window": {core.PerSecond(10).WithAlgorithm(core.SlidingWindow)},
		"take_sliding_log":    {core.PerSecond(10).WithAlgorithm(core.SlidingLog)},
		"take":                {core.PerSecond(10), core.PerMinute(100).WithAlgorithm(core.SlidingLog)},
	}
	// sent runs call on a server without the program and checks what the
	// store sent for it against `ratelimit script name`.
	sent := func(name string, call func() error) {
		t.Helper()
		rec.mu.Lock()
		rec.sources, rec.hashes = nil, nil
		rec.mu.Unlock()
		require.NoError(t, call(), name)

		require.Len(t, rec.sources, 1, "%s: one EVAL after the NOSCRIPT", name)
		require.Len(t, rec.hashes, 1, "%s: one EVALSHA first", name)
		code, source, _ := cli(t, "script", name)
		require.Equal(t, exitOK, code)
		assert.Equal(t, rec.sources[0], source, "%s: the source the store sent", name)
		code, hash, _ := cli(t, "script", "--sha", name)
		require.Equal(t, exitOK, code)
		assert.Equal(t, rec.hashes[0]+"\n", hash, "%s: the SHA-1 the store named", name)
		sum := sha1.Sum([]byte(source))
		assert.Equal(t, hex.EncodeToString(sum[:]), rec.hashes[0], "%s: the SHA-1 of the source", name)
		exists, err := client.ScriptExists(ctx, rec.hashes[0]).Result()
		require.NoError(t, err)
		assert.Equal(t, []bool{true}, exists, "%s: the server has it", name)
	}
	for name, limits := range takes {
		sent(name, func() error {
			_, err := store.Take(ctx, nil, kb.AppendKeys(nil, "alice", limits), limits, 1)
			return err
		})
	}
	// A concurrency limit's take runs "take" (cached by now); its release
	// runs "lease".
	inFlight := []core.Limit{core.Concurrent(2)}
	keys := kb.AppendKeys(nil, "alice", inFlight)
	_, err = store.TakeLease(ctx, nil, keys, inFlight, 1, "lease-1")
	require.NoError(t, err)
	sent("lease", func() error { return store.Release(ctx, keys[0], inFlight[0], "lease-1") })
	sent("control", func() error {
		_, err := store.TouchControl(ctx, prefix, "alice")
		return err
	})
}

func TestScriptListsEveryProgram(t *testing.T) {
	code, out, _ := cli(t, "script")
	require.Equal(t, exitOK, code)
	for _, s := range redisstore.Scripts() {
		assert.Regexp(t, `(?m)^`+s.SHA1+`  `+s.Name+` +(a take of (one [a-zA-Z ]+ limit|several limits, or of one calendar or concurrency limit)|the release or renewal of a concurrency lease|the controls of a key prefix: set, delete, touch, read)$`, out)
	}
	code, _, stderr := cli(t, "script", "nope")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, `no program "nope" (programs: take_gcra, `)
}
