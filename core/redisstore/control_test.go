package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// controlSpace returns a fresh prefix whose control keys are deleted when
// t ends, after a check that each has a TTL.
func controlSpace(t *testing.T, client redis.UniversalClient) string {
	t.Helper()
	space := redistest.Prefix(t)
	t.Cleanup(func() {
		assertKeysExpire(t, client, space)
		deleteControlKeys(t, client, space)
	})
	return space
}

// TestControlKeys checks the layout docs/redis-protocol.md states: five
// keys under the tag {~ctl}, of the types and values it gives, each with a
// TTL of 366 days, all in one Cluster slot.
func TestControlKeys(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			space := controlSpace(t, client)
			clock := storetest.NewClock()
			store := mustNew(t, client, redisstore.WithClock(clock.Now))
			ctx := context.Background()
			start := keylayout.EpochMicros(clock.Now())
			expiry := clock.Now().Add(time.Hour)
			g, err := store.SetControl(ctx, space, "alice", []byte(`{"block":{}}`), expiry)
			require.NoError(t, err)
			require.Equal(t, uint64(start+1), g)

			key := func(part string) string { return space + ":{~ctl}:" + part }
			assert.Equal(t, `{"block":{}}`, client.HGet(ctx, key("r"), "alice").Val())
			assert.Equal(t, float64(keylayout.EpochMicros(expiry)), client.ZScore(ctx, key("e"), "alice").Val())
			assert.Equal(t, float64(g), client.ZScore(ctx, key("l"), "alice").Val())
			assert.Equal(t, strconv.FormatUint(g, 10), client.Get(ctx, key("g")).Val())
			assert.Equal(t, strconv.FormatInt(start, 10), client.Get(ctx, key("t")).Val(), "nothing logged before the first write")
			var slots []int64
			for _, part := range []string{"r", "e", "l", "g", "t"} {
				ttl := client.PTTL(ctx, key(part)).Val()
				assert.InDelta(t, core.MaxControlAge, ttl, float64(time.Minute), "TTL of %s", key(part))
				if cc, ok := client.(*redis.ClusterClient); ok {
					slots = append(slots, cc.ClusterKeySlot(ctx, key(part)).Val())
				}
			}
			if len(slots) > 0 {
				assert.Equal(t, []int64{slots[0], slots[0], slots[0], slots[0], slots[0]}, slots, "one slot")
			}
		})
	}
}

// TestControlsWithServerClock runs a store on Redis's own clock (TIME):
// expiries and Now are the server's, within a minute of this process's.
func TestControlsWithServerClock(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	space := controlSpace(t, client)
	store := mustNew(t, client)
	ctx := context.Background()
	expiry := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	_, err := store.SetControl(ctx, space, "alice", []byte("A"), expiry)
	require.NoError(t, err)
	g, err := store.SetControl(ctx, space, "bob", []byte("B"), time.Time{})
	require.NoError(t, err)

	ch, err := store.Controls(ctx, space, 0)
	require.NoError(t, err)
	assert.Equal(t, g, ch.Gen)
	assert.WithinDuration(t, time.Now(), ch.Now, time.Minute, "the server's clock")
	require.Len(t, ch.Records, 2)
	for _, e := range ch.Records {
		switch e.ID {
		case "alice":
			assert.True(t, expiry.Equal(e.Expires), "alice expires when set: %v", e.Expires)
		case "bob":
			assert.WithinDuration(t, time.Now().Add(core.MaxControlAge), e.Expires, time.Minute, "bob's longest expiry")
		}
	}
}

// TestControlsAfterARestartThatLostTheData restarts a server empty (no
// persistence): a reader of the old generation reads everything, even
// after more writes than it had seen, since the space starts again at the
// server's clock in µs, above every old generation. The restarted server
// has no script cached: the store sends EVAL after NOSCRIPT.
func TestControlsAfterARestartThatLostTheData(t *testing.T) {
	srv := redistest.Dedicated(t)
	client := safeClient(t, srv.Addr())
	store := mustNew(t, client)
	ctx := context.Background()
	for i := range 5 {
		_, err := store.SetControl(ctx, "rl", fmt.Sprint("old", i), []byte("O"), time.Time{})
		require.NoError(t, err)
	}
	seen, err := store.Controls(ctx, "rl", 0)
	require.NoError(t, err)
	require.Len(t, seen.Records, 5)

	srv.Kill(t)
	srv.Restart(t)
	ch := controlsEventually(t, store, "rl", seen.Gen)
	assert.True(t, ch.Full, "a generation above the store's: full")
	assert.Zero(t, ch.Gen)
	assert.Empty(t, ch.Records)

	var g uint64
	for range 20 {
		g, err = store.SetControl(ctx, "rl", "new", []byte("N"), time.Time{})
		require.NoError(t, err)
	}
	require.Greater(t, g, seen.Gen, "the new space's generations are above the old ones")
	ch, err = store.Controls(ctx, "rl", seen.Gen)
	require.NoError(t, err)
	assert.True(t, ch.Full, "the old generation is before the new space's log: full")
	require.Len(t, ch.Records, 1)
	assert.Equal(t, "new", ch.Records[0].ID)
}

// controlsEventually reads the changes since until the restarted server
// answers.
func controlsEventually(t *testing.T, store *redisstore.Store, space string, since uint64) core.ControlChanges {
	t.Helper()
	var ch core.ControlChanges
	require.Eventually(t, func() bool {
		var err error
		ch, err = store.Controls(context.Background(), space, since)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	return ch
}

// TestControlErrors classifies the errors of the control methods as those
// of a take: a dead server is unavailable (a limiter keeps serving), a key
// of the wrong type is a bug.
func TestControlErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("dead server: unavailable", func(t *testing.T) {
		srv := redistest.Dedicated(t)
		store := mustNew(t, safeClient(t, srv.Addr()))
		srv.Kill(t)
		_, err := store.SetControl(ctx, "rl", "a", []byte("A"), time.Time{})
		assert.ErrorIs(t, err, core.ErrStoreUnavailable, "SetControl")
		_, err = store.TouchControl(ctx, "rl", "a")
		assert.ErrorIs(t, err, core.ErrStoreUnavailable, "TouchControl")
		_, err = store.Controls(ctx, "rl", 0)
		assert.ErrorIs(t, err, core.ErrStoreUnavailable, "Controls")
		_, err = store.DeleteKeys(ctx, []string{"rl:{a}:x:g"})
		assert.ErrorIs(t, err, core.ErrStoreUnavailable, "DeleteKeys")
	})
	t.Run("a control key of the wrong type: a bug", func(t *testing.T) {
		client := redistest.Standalone(t).Client(t)
		space := controlSpace(t, client)
		require.NoError(t, client.Set(ctx, space+":{~ctl}:r", "not a hash", time.Minute).Err())
		_, err := mustNew(t, client).SetControl(ctx, space, "a", []byte("A"), time.Time{})
		require.Error(t, err)
		assert.NotErrorIs(t, err, core.ErrStoreUnavailable)
		assert.Contains(t, err.Error(), "WRONGTYPE")
		assert.True(t, strings.HasPrefix(err.Error(), "ratelimit: redis controls: "), err.Error())
	})
}

// TestControlOnSentinel sets and reads controls through a failover client:
// the store needs nothing of the client but scripts.
func TestControlOnSentinel(t *testing.T) {
	g := redistest.Sentinel(t, 1)
	client := redisstore.NewFailoverClient(g.FailoverOptions())
	t.Cleanup(func() { _ = client.Close() })
	space := controlSpace(t, client)
	store := mustNew(t, client)
	ctx := context.Background()
	gen, err := store.SetControl(ctx, space, "alice", []byte("A"), time.Time{})
	require.NoError(t, err)
	ch, err := store.Controls(ctx, space, gen-1)
	require.NoError(t, err)
	assert.Equal(t, gen, ch.Gen)
	require.Len(t, ch.Records, 1)
	assert.Equal(t, []byte("A"), ch.Records[0].Value)
	n, err := store.DeleteKeys(ctx, []string{space + ":{alice}:x:g"})
	require.NoError(t, err)
	assert.Zero(t, n)
}

// TestControlProgramAsDocumented calls the program "control" as
// docs/redis-protocol.md tells another language to, and checks the
// errors it replies before any write.
func TestControlProgramAsDocumented(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	space := controlSpace(t, client)
	ctx := context.Background()
	var control *redis.Script
	for _, s := range redisstore.Scripts() {
		if s.Name == "control" {
			control = redis.NewScript(s.Source)
		}
	}
	require.NotNil(t, control, "Scripts lists control")
	keys := []string{space + ":{~ctl}:r", space + ":{~ctl}:e", space + ":{~ctl}:l", space + ":{~ctl}:g", space + ":{~ctl}:t"}
	now := keylayout.EpochMicros(storetest.Start())

	set, err := control.Run(ctx, client, keys, now, "set", "alice", "A", now+60_000_000).Int64Slice()
	require.NoError(t, err)
	require.Len(t, set, 1)
	touch, err := control.Run(ctx, client, keys, now, "touch", "bob").Int64Slice()
	require.NoError(t, err)
	assert.Equal(t, []int64{set[0] + 1}, touch)
	read, err := control.Run(ctx, client, keys, now, "read", set[0]-1).Slice()
	require.NoError(t, err)
	assert.Equal(t, []any{set[0] + 1, now, int64(0), "alice", now + 60_000_000, "A", "bob", int64(0), nil}, read)
	read, err = control.Run(ctx, client, keys, now, "read", 0).Slice()
	require.NoError(t, err)
	assert.Equal(t, []any{set[0] + 1, now, int64(1), "alice", now + 60_000_000, "A"}, read)

	bad := []struct {
		name string
		keys []string
		args []any
		want string
	}{
		{"record over 4096 bytes", keys, []any{"", "set", "a", strings.Repeat("x", 4097), ""}, "1 to 4096 bytes"},
		{"empty record", keys, []any{"", "set", "a", "", ""}, "1 to 4096 bytes"},
		{"no id", keys, []any{"", "touch"}, "needs a client id"},
		{"unknown operation", keys, []any{"", "drop", "a"}, "unknown operation"},
		{"four keys", keys[:4], []any{"", "touch", "a"}, "want 5"},
		{"read without since", keys, []any{"", "read"}, "read needs since"},
	}
	for _, tt := range bad {
		err := control.Run(ctx, client, tt.keys, tt.args...).Err()
		assert.ErrorContains(t, err, tt.want, tt.name)
	}
	gen, err := client.Get(ctx, keys[3]).Uint64()
	require.NoError(t, err)
	assert.Equal(t, uint64(set[0]+1), gen, "no refused call wrote")
	n, err := control.Run(ctx, client, keys, "", "set", "a", strings.Repeat("x", 4096), "").Int64Slice()
	require.NoError(t, err)
	assert.Equal(t, []int64{set[0] + 2}, n, "a record of 4096 bytes is kept")
}
