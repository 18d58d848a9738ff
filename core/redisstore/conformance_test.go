package redisstore_test

import (
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

// storetestKeys matches the keys of storetest.UniqueKeyBuilder prefixes
// ("st" and 16 hex digits), for the TTL check after the suites.
const storetestKeys = "st[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]" +
	"[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]"

// TestConformance runs the store conformance suite on the standalone
// server and on the cluster, then checks that every key it left has a TTL.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			t.Cleanup(func() { assertKeysExpire(t, client, storetestKeys) })
			storetest.Run(t, func(t *testing.T, now func() time.Time) core.Store {
				return mustNew(t, client, redisstore.WithClock(now))
			})
		})
	}
}

// TestConformanceConcurrency runs the suite's concurrency cases with n
// stores on n separate clients (n app nodes) sharing one server or cluster.
func TestConformanceConcurrency(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			checker := b.client(t)
			t.Cleanup(func() { assertKeysExpire(t, checker, storetestKeys) })
			storetest.RunConcurrency(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
				stores := make([]core.Store, n)
				for i, c := range b.clients(t, n) {
					stores[i] = mustNew(t, c, redisstore.WithClock(now))
				}
				return stores
			})
		})
	}
}
