package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// pingWithin reports whether c answers PING within d, and how long it took.
func pingWithin(c *redis.Client, d time.Duration) (bool, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := c.Ping(ctx).Err()
	return err == nil, time.Since(start)
}

func TestProxyDelaysAndBlackholes(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	opts := srv.Options()
	opts.Addr, opts.ContextTimeoutEnabled, opts.MaxRetries = proxy.Addr(), true, -1
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })

	ok, _ := pingWithin(client, time.Second)
	require.True(t, ok, "through the proxy")
	assert.Equal(t, 1, proxy.Conns())

	proxy.SetDelay(100 * time.Millisecond)
	ok, took := pingWithin(client, time.Second)
	assert.True(t, ok)
	assert.GreaterOrEqual(t, took, 100*time.Millisecond, "a delayed round trip")

	proxy.SetDelay(0)
	proxy.SetBlackhole(true)
	ok, _ = pingWithin(client, 100*time.Millisecond)
	assert.False(t, ok, "nothing comes back from a black hole")

	proxy.SetBlackhole(false)
	ok, _ = pingWithin(client, time.Second)
	assert.True(t, ok, "a new connection works again")
}

func TestDedicatedFreezeKillRestart(t *testing.T) {
	srv := redistest.Dedicated(t)
	opts := srv.Options()
	opts.ContextTimeoutEnabled, opts.MaxRetries = true, -1
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	ctx := context.Background()
	require.NoError(t, client.Set(ctx, "k", "v", time.Minute).Err())

	srv.Freeze(t)
	ok, _ := pingWithin(client, 100*time.Millisecond)
	assert.False(t, ok, "a frozen server answers nothing")
	srv.Thaw(t)
	ok, _ = pingWithin(client, time.Second)
	assert.True(t, ok, "a thawed server answers again")

	srv.Kill(t)
	ok, _ = pingWithin(client, time.Second)
	assert.False(t, ok, "a killed server refuses connections")
	srv.Restart(t)
	ok, _ = pingWithin(client, time.Second)
	assert.True(t, ok, "the restarted server answers on the same port")
	n, err := client.Exists(ctx, "k").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "and comes back empty")
}

func TestSharedServerCannotBeFrozen(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		redistest.Standalone(t).Freeze(ft)
	}()
	assert.True(t, ft.failed)
}

// fatalRecorder records a Fatal call instead of ending the test (Fatal
// then panics to stop the caller, as runtime.Goexit would).
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Fatal(args ...any) {
	f.failed = true
	panic("fatal")
}
