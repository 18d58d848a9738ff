package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// storetestKeys matches the keys of storetest.UniqueKeyBuilder prefixes
// ("st" and 16 hex digits), for the TTL check after the suites.
const storetestKeys = "st[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]" +
	"[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]"

// TestConformance runs the store conformance suite on the standalone
// server and on the cluster, then checks that every key it left has a TTL.
// Keys expire on the test clock (NewWithTestClockExpiry), as in the other
// suites on an injected clock: a case 1 µs before a window's end leaves a
// key whose real TTL is 1 ms, which a loaded machine's next call outlived
// (seen in CI: a calendar month's peek found no state). The programs' own
// TTLs are checked on the server's clock by TestTTLCoversTheStateAfterAClockStepBack
// and the real-time tests.
//
// The suite's control cases run here too: their records expire by the test
// clock (the program "control" compares the expiries it keeps with the now
// it is sent), and their keys, whose TTL is a year, are deleted after the
// TTL check.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			t.Cleanup(func() {
				assertKeysExpire(t, client, storetestKeys)
				deleteControlKeys(t, client, storetestKeys)
			})
			storetest.Run(t, func(t *testing.T, now func() time.Time) core.Store {
				s, err := redisstore.NewWithTestClockExpiry(client, now)
				require.NoError(t, err)
				return s
			})
		})
	}
}

// TestConformanceCalendarSkew runs the calendar tables with the app's
// clock, from which the store computes the boundaries it sends, off the
// clock that decides (the test's stand-in for Redis TIME) by up to 45
// hours: no boundary moves.
func TestConformanceCalendarSkew(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			t.Cleanup(func() { assertKeysExpire(t, client, storetestKeys) })
			// Keys expire on the test clock (NewWithTestClockExpiry): a case
			// 1 µs before a window's end leaves a key whose real TTL is 1 ms,
			// which a loaded machine's next call can outlive.
			storetest.RunCalendarSkew(t, func(t *testing.T, storeNow, appNow func() time.Time) core.Store {
				s, err := redisstore.NewWithTestClockExpiry(client, storeNow, redisstore.WithAppClock(appNow))
				require.NoError(t, err)
				return s
			})
		})
	}
}

// TestConformanceConcurrency runs the suite's concurrency cases with n
// stores on n separate clients (n app nodes) sharing one server or cluster,
// controls written and read by two of them included.
func TestConformanceConcurrency(t *testing.T) {
	runOnNodes(t, storetest.RunConcurrency)
}

// runOnNodes runs suite on every backend with stores on separate clients
// (app nodes) sharing one server or cluster, and checks afterwards that
// every key it left expires, the controls' keys deleted.
func runOnNodes(t *testing.T, suite func(*testing.T, func(t *testing.T, now func() time.Time, n int) []core.Store)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			checker := b.client(t)
			t.Cleanup(func() {
				assertKeysExpire(t, checker, storetestKeys)
				deleteControlKeys(t, checker, storetestKeys)
			})
			suite(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
				stores := make([]core.Store, n)
				for i, c := range b.clients(t, n) {
					stores[i] = mustNew(t, c, redisstore.WithClock(now))
				}
				return stores
			})
		})
	}
}

// TestConformanceDifferential compares the store with a memory store take
// for take on random limits, costs and instants, clock steps back included
// (storetest.RunDifferential). The script expires its keys on the test
// clock, as the memory store does (redisstore.NewWithTestClockExpiry).
func TestConformanceDifferential(t *testing.T) {
	memory := func(t *testing.T, now func() time.Time) core.Store {
		s, err := memstore.New(memstore.WithClock(now))
		require.NoError(t, err)
		return s
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			t.Cleanup(func() { assertKeysExpire(t, client, storetestKeys) })
			storetest.RunDifferential(t, memory, func(t *testing.T, now func() time.Time) core.Store {
				s, err := redisstore.NewWithTestClockExpiry(client, now)
				require.NoError(t, err)
				return s
			})
		})
	}
}

// deleteControlKeys deletes the control keys under the prefixes prefix
// matches (a glob), in every space under them: they live a year.
func deleteControlKeys(t testing.TB, client redis.UniversalClient, prefix string) {
	t.Helper()
	for _, key := range redistest.ScanKeys(t, client, prefix+":*{~ctl}:*") {
		require.NoError(t, client.Del(context.Background(), key).Err())
	}
}

// TestControlNodes: two limiters on two clients of one server or cluster,
// what one node sets (an override, a block, an unblock, an exemption, a
// reset), the other applies within core.ControlSyncEvery, its deny cache
// included (storetest.RunControlNodes).
func TestControlNodes(t *testing.T) {
	runOnNodes(t, storetest.RunControlNodes)
}
