package redisstore_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestMain quiets two loggers whose lines would bury a failure's output:
// go-redis logs every failed dial of the fault tests, and stores built on
// the tests' plain clients warn about their settings (client_test.go checks
// those warnings with loggers of its own).
func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	slog.SetDefault(slog.New(slog.DiscardHandler))
	redistest.Main(m)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// A backend is a kind of Redis deployment the store must work on.
type backend struct {
	name string
	// clients returns n independent clients (n app nodes) of the backend.
	clients func(t testing.TB, n int) []redis.UniversalClient
}

// client returns one client of the backend.
func (b backend) client(t testing.TB) redis.UniversalClient { return b.clients(t, 1)[0] }

// backends are the standalone server and the three-master cluster.
var backends = []backend{
	{"standalone", func(t testing.TB, n int) []redis.UniversalClient {
		return universal(redistest.Standalone(t).Clients(t, n))
	}},
	{"cluster", func(t testing.TB, n int) []redis.UniversalClient {
		return universal(redistest.Cluster(t).Clients(t, n))
	}},
}

func universal[C redis.UniversalClient](cs []C) []redis.UniversalClient {
	us := make([]redis.UniversalClient, len(cs))
	for i, c := range cs {
		us[i] = c
	}
	return us
}

// newStore returns a store on client and a key builder with a prefix of its
// own, whose keys are checked for TTLs when t ends.
func newStore(t testing.TB, client redis.UniversalClient, opts ...redisstore.Option) (*redisstore.Store, core.KeyBuilder) {
	t.Helper()
	return mustNew(t, client, opts...), newKeyBuilder(t, client)
}

func mustNew(t testing.TB, client redis.UniversalClient, opts ...redisstore.Option) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(client, opts...)
	require.NoError(t, err)
	return s
}

// newKeyBuilder returns a key builder with a fresh prefix and checks, when
// t ends, that every key under it has a TTL.
func newKeyBuilder(t testing.TB, client redis.UniversalClient) core.KeyBuilder {
	t.Helper()
	prefix := redistest.Prefix(t)
	kb, err := core.NewKeyBuilder(prefix)
	require.NoError(t, err)
	t.Cleanup(func() { assertKeysExpire(t, client, prefix) })
	return kb
}

// assertKeysExpire checks that every key under prefix has a TTL: the
// scripts must never leave a key that lives forever.
func assertKeysExpire(t testing.TB, client redis.UniversalClient, prefix string) {
	t.Helper()
	ctx := context.Background()
	for _, key := range redistest.ScanKeys(t, client, prefix+":*") {
		pttl, err := client.Do(ctx, "PTTL", key).Int64()
		require.NoError(t, err)
		// -1 is a key without TTL. 0 is a TTL under a millisecond (a GCRA
		// key of 1000/s lives 1 ms) and -2 a key that expired between SCAN
		// and PTTL: both fine.
		assert.True(t, pttl >= 0 || pttl == -2, "key %q has PTTL %d", key, pttl)
	}
}

// outcome is a Decision without its Limit, for comparisons.
type outcome struct {
	Allowed    bool
	Reason     core.Reason
	Remaining  int64
	ResetAfter time.Duration
	RetryAfter time.Duration
}

func outcomeOf(d core.Decision) outcome {
	return outcome{d.Allowed, d.Reason, d.Remaining, d.ResetAfter, d.RetryAfter}
}

func outcomesOf(ds []core.Decision) []outcome {
	os := make([]outcome, len(ds))
	for i, d := range ds {
		os[i] = outcomeOf(d)
	}
	return os
}
