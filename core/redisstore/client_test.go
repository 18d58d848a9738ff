package redisstore_test

import (
	"bytes"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// unreachable is an address no test dials: the clients below are only
// inspected (go-redis connects lazily; MinIdleConns -1 keeps the warm pool
// from dialing).
const unreachable = "127.0.0.1:1"

func TestSafeOptions(t *testing.T) {
	opt := &redis.Options{Addr: unreachable, Password: "secret", PoolSize: 7, MaxRetries: 5}

	got := redisstore.SafeOptions(opt)

	assert.Equal(t, &redis.Options{Addr: unreachable, Password: "secret", PoolSize: 7, MaxRetries: 5}, opt, "opt is not changed")
	assert.Equal(t, unreachable, got.Addr)
	assert.Equal(t, "secret", got.Password)
	assert.Equal(t, 7, got.PoolSize)
	assert.True(t, got.ContextTimeoutEnabled)
	assert.Equal(t, -1, got.MaxRetries)
	assert.Equal(t, redisstore.BackstopTimeout, got.ReadTimeout)
	assert.Equal(t, redisstore.BackstopTimeout, got.WriteTimeout)
	assert.Equal(t, redisstore.BackstopTimeout, got.PoolTimeout)
	assert.Equal(t, redisstore.BackstopTimeout, got.DialTimeout)
	assert.Equal(t, 1, got.DialerRetries)
	assert.Equal(t, runtime.GOMAXPROCS(0), got.MinIdleConns)
	assert.Equal(t, 3, redisstore.SafeOptions(&redis.Options{MinIdleConns: 3}).MinIdleConns, "a warm pool size is kept")
}

func TestSafeClusterOptions(t *testing.T) {
	opt := &redis.ClusterOptions{Addrs: []string{unreachable}, MaxRedirects: 2}

	got := redisstore.SafeClusterOptions(opt)

	assert.Zero(t, opt.ClusterStateReloadInterval, "opt is not changed")
	assert.True(t, got.ContextTimeoutEnabled)
	assert.Equal(t, -1, got.MaxRetries)
	assert.Equal(t, 2, got.MaxRedirects, "redirects are kept: MOVED after a failover needs them")
	assert.Equal(t, time.Duration(-1), got.MinRetryBackoff)
	assert.Equal(t, time.Duration(-1), got.MaxRetryBackoff)
	assert.Equal(t, redisstore.BackstopTimeout, got.ReadTimeout)
	assert.Equal(t, 10*time.Second, got.ClusterStateReloadInterval)
}

func TestSafeFailoverOptions(t *testing.T) {
	opt := &redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{unreachable}}

	got := redisstore.SafeFailoverOptions(opt)

	assert.False(t, opt.ContextTimeoutEnabled, "opt is not changed")
	assert.Equal(t, "m", got.MasterName)
	assert.True(t, got.ContextTimeoutEnabled)
	assert.Equal(t, -1, got.MaxRetries)
	assert.Equal(t, redisstore.BackstopTimeout, got.PoolTimeout)
}

func TestCheckClient(t *testing.T) {
	tests := []struct {
		name   string
		client redis.Scripter
		want   []string // a distinctive part of each problem, in order
	}{
		{"go-redis defaults", redis.NewClient(&redis.Options{Addr: unreachable}),
			[]string{"ContextTimeoutEnabled is false", "MaxRetries is 3"}},
		{"short socket timeouts without ContextTimeoutEnabled",
			redis.NewClient(&redis.Options{Addr: unreachable, ReadTimeout: 20 * time.Millisecond, MaxRetries: -1}), nil},
		{"no socket timeout", redis.NewClient(&redis.Options{Addr: unreachable, ReadTimeout: -1, MaxRetries: -1}),
			[]string{"ReadTimeout none"}},
		{"NewClient", redisstore.NewClient(&redis.Options{Addr: unreachable, MinIdleConns: -1}), nil},
		{"cluster defaults", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{unreachable}}),
			[]string{"ContextTimeoutEnabled is false"}},
		{"cluster with a short ReadTimeout", redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{unreachable},
			ContextTimeoutEnabled: true, ReadTimeout: 10 * time.Millisecond}), []string{"resends the script (MaxRedirects 3)"}},
		{"NewClusterClient", redisstore.NewClusterClient(&redis.ClusterOptions{Addrs: []string{unreachable}, MinIdleConns: -1}), nil},
		{"failover defaults", redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{unreachable}}),
			[]string{"ContextTimeoutEnabled is false", "MaxRetries is 3"}},
		{"NewFailoverClient", redisstore.NewFailoverClient(&redis.FailoverOptions{MasterName: "m",
			SentinelAddrs: []string{unreachable}, MinIdleConns: -1}), nil},
		{"ring defaults", redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": unreachable}}),
			[]string{"ContextTimeoutEnabled is false", "MaxRetries is 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, ok := tt.client.(interface{ Close() error }); ok {
				t.Cleanup(func() { _ = c.Close() })
			}

			got := redisstore.CheckClient(tt.client, 0)

			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

func TestNewLogsRiskyClientSettingsOnce(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	risky := redis.NewClient(&redis.Options{Addr: unreachable})
	t.Cleanup(func() { _ = risky.Close() })
	safe := redisstore.NewClient(&redis.Options{Addr: unreachable, MinIdleConns: -1})
	t.Cleanup(func() { _ = safe.Close() })

	_, err := redisstore.New(safe, redisstore.WithLogger(logger))
	require.NoError(t, err)
	assert.Empty(t, buf.String(), "a safe client logs nothing")

	s, err := redisstore.New(risky, redisstore.WithLogger(logger))
	require.NoError(t, err, "a risky client is accepted")
	require.NotNil(t, s)
	assert.Equal(t, 2, bytes.Count(buf.Bytes(), []byte("level=WARN")), buf.String())
	assert.Contains(t, buf.String(), "50ms decision deadline", "checked against core.DefaultTimeout")
}

// The safe clients take no budget: a longer limiter timeout needs no other
// client, up to the backstop; past it, CheckClient says why.
func TestSafeClientsFitAnyBudgetUpToTheBackstop(t *testing.T) {
	cluster := redisstore.NewClusterClient(&redis.ClusterOptions{Addrs: []string{unreachable}, MinIdleConns: -1})
	t.Cleanup(func() { _ = cluster.Close() })
	for _, budget := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 500 * time.Millisecond, redisstore.BackstopTimeout} {
		assert.Empty(t, redisstore.CheckClient(cluster, budget), "budget %s", budget)
	}
	got := redisstore.CheckClient(cluster, 2*redisstore.BackstopTimeout)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "shorter than the 1s budget")
}

// The budget is set once, with core.WithTimeout; a budget the client cannot
// keep without risking a double charge fails at NewLimiter, naming both.
func TestNewLimiterRefusesATimeoutTheClusterClientCannotKeep(t *testing.T) {
	cluster := redisstore.NewClusterClient(&redis.ClusterOptions{Addrs: []string{unreachable}, MinIdleConns: -1})
	t.Cleanup(func() { _ = cluster.Close() })
	store, err := redisstore.New(cluster)
	require.NoError(t, err)
	limits := core.WithLimits(core.PerSecond(10))

	for _, d := range []time.Duration{time.Millisecond, core.DefaultTimeout, redisstore.BackstopTimeout} {
		_, err := core.NewLimiter(store, limits, core.WithTimeout(d))
		assert.NoError(t, err, "WithTimeout(%s)", d)
	}
	_, err = core.NewLimiter(store, limits, core.WithTimeout(2*redisstore.BackstopTimeout))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithTimeout(1s)")
	assert.Contains(t, err.Error(), "ReadTimeout 500ms is shorter than the 1s budget")

	standalone := redisstore.NewClient(&redis.Options{Addr: unreachable, MinIdleConns: -1})
	t.Cleanup(func() { _ = standalone.Close() })
	s2, err := redisstore.New(standalone)
	require.NoError(t, err)
	_, err = core.NewLimiter(s2, limits, core.WithTimeout(2*redisstore.BackstopTimeout))
	assert.NoError(t, err, "a standalone client resends nothing: a longer budget only ends slow reads early")
}
