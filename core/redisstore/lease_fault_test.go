package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// Lease TTLs of the fault tests, short so the tests end soon. The
// assertions around them have generous margins for a loaded machine:
// capacity must not come back before the TTL (the Redis clock decides, so
// this holds on any machine: the lease was taken after the local clock
// read start), and must come back within the TTL plus leaseMargin.
const (
	leaseTTL    = 2 * time.Second
	leaseMargin = 10 * time.Second
)

// leaseLimits are a rate limit and the concurrency limit under test.
var leaseLimits = []core.Limit{bigLimit, core.Concurrent(2).WithLeaseTTL(leaseTTL)}

// TestLeasesOfADeadAppNodeExpire: an app node takes every place of a
// client and dies without releasing (its process is gone, so is its
// Limiter). Another node's requests are denied until the leases expire by
// the Redis clock, then admitted; the key always has a TTL no longer than
// the lease TTL.
func TestLeasesOfADeadAppNodeExpire(t *testing.T) {
	srv := redistest.Standalone(t)
	client := redisstore.NewClient(srv.Options())
	t.Cleanup(func() { _ = client.Close() })
	other := redisstore.NewClient(srv.Options())
	t.Cleanup(func() { _ = other.Close() })
	prefix := leasePrefix(t, client)
	dying := leaseLimiter(t, safeStore(t, client), prefix, leaseLimits)
	survivor := leaseLimiter(t, safeStore(t, other), prefix, leaseLimits)
	ctx := context.Background()

	start := time.Now()
	for range 2 {
		res, err := dying.Allow(ctx, "alice")
		require.NoError(t, err)
		require.True(t, res.Allowed)
		require.NotNil(t, res.Lease) // never released: the node died
	}
	res, err := survivor.Allow(ctx, "alice")
	require.NoError(t, err)
	require.False(t, res.Allowed, "the dead node's leases hold both places")
	assert.Equal(t, core.Concurrency, res.Binding().Limit.Algorithm)

	key := prefix + ":{alice}:2-in-flight:i"
	pttl, err := client.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.Positive(t, pttl, "the lease key has a TTL")
	assert.LessOrEqual(t, pttl, leaseTTL, "and it is no longer than the lease TTL")

	back := waitAdmitted(t, survivor, "alice", start.Add(leaseTTL+leaseMargin))
	elapsed := back.Sub(start)
	t.Logf("capacity back %s after the dead node took it (lease TTL %s)", elapsed.Round(time.Millisecond), leaseTTL)
	assert.GreaterOrEqual(t, elapsed, leaseTTL, "capacity came back before the lease TTL")
}

// TestLeasesSurviveAClusterFailover: a client's leases are on a master
// that is killed; its replica, promoted, holds them (replicated with
// their expiry scores and the key's TTL), so the places stay taken after
// the failover and come back when the leases expire, not before.
func TestLeasesSurviveAClusterFailover(t *testing.T) {
	hc := redistest.ReplicatedCluster(t)
	client := redisstore.NewClusterClient(hc.Options())
	t.Cleanup(func() { _ = client.Close() })
	ttl := 8 * time.Second // longer than a failover (ClusterNodeTimeout is 1 s)
	limits := []core.Limit{bigLimit, core.Concurrent(2).WithLeaseTTL(ttl)}
	prefix := leasePrefix(t, client)
	l := leaseLimiter(t, safeStore(t, client), prefix, limits, core.WithFailureMode(core.FailClosed))
	ctx := context.Background()
	id := "alice"
	victim := hc.Shards(t, hc.Addrs()[0], "{"+id+"}")[0]

	start := time.Now()
	// Take both places. On a loaded machine a take may time out
	// (FailClosed denies it, degraded); the limiter then releases its
	// lease id, so it is taken again.
	for held := 0; held < 2; {
		res, err := l.Allow(ctx, id)
		require.NoError(t, err)
		require.True(t, res.Allowed || res.Degraded, "place %d: denied by the store before the failover", held+1)
		if res.Allowed {
			held++
		}
		require.Less(t, time.Since(start), ttl/2, "the places were not taken within half the lease TTL")
	}
	// Make sure the replica has the leases before the master dies:
	// replication is asynchronous, and this test is about the leases that
	// reached it.
	key := prefix + ":{" + id + "}:2-in-flight:i"
	master, err := client.MasterForKey(ctx, key)
	require.NoError(t, err)
	require.NoError(t, master.Do(ctx, "WAIT", 1, 5000).Err())

	promoted := watchRole(t, hc, victim.Replica, newTraffic())
	hc.Kill(t, victim.Master)
	select {
	case <-promoted:
	case <-time.After(20 * time.Second):
		t.Fatal("the replica was not promoted within 20 s")
	}
	// Until the leases expire, every decided request is denied: FailClosed
	// denies the ones the store could not answer during the switchover.
	var back time.Time
	var heldByReplica, degraded int
	for deadline := start.Add(ttl + leaseMargin); ; {
		res, err := l.Allow(ctx, id)
		require.NoError(t, err)
		switch {
		case res.Degraded:
			degraded++
		case !res.Allowed:
			heldByReplica++
		}
		if res.Allowed {
			back = time.Now()
			require.NoError(t, l.Release(ctx, res))
			break
		}
		require.True(t, time.Now().Before(deadline), "capacity not back %s after the leases were taken", time.Since(start))
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := back.Sub(start)
	t.Logf("capacity back %s after the leases were taken (lease TTL %s), across a failover; %d denials by the promoted replica, %d degraded",
		elapsed.Round(time.Millisecond), ttl, heldByReplica, degraded)
	assert.Positive(t, heldByReplica, "the promoted replica answered before the leases expired (else this test saw nothing)")
	assert.GreaterOrEqual(t, elapsed, ttl, "the promoted replica lost the leases: capacity came back before their TTL")
}

// leasePrefix returns a key prefix for t whose keys are checked for TTLs
// (on checker) when t ends.
func leasePrefix(t *testing.T, checker redis.UniversalClient) string {
	prefix := redistest.Prefix(t)
	t.Cleanup(func() { assertKeysExpire(t, checker, prefix) })
	return prefix
}

// leaseLimiter returns a limiter of limits on store under prefix, with the
// fault tests' timeout and no breaker (these tests look at every decision).
func leaseLimiter(t *testing.T, store core.Store, prefix string, limits []core.Limit, opts ...core.Option) *core.Limiter {
	t.Helper()
	opts = append([]core.Option{core.WithLimits(limits...), core.WithPrefix(prefix), core.WithTimeout(budget), core.WithoutBreaker()}, opts...)
	l, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	return l
}

// waitAdmitted polls l every 50 ms until a request of id is admitted,
// releases it, and returns when; it fails t at deadline.
func waitAdmitted(t *testing.T, l *core.Limiter, id string, deadline time.Time) time.Time {
	t.Helper()
	for {
		res, err := l.Allow(context.Background(), id)
		require.NoError(t, err)
		if res.Allowed {
			at := time.Now()
			require.NoError(t, l.Release(context.Background(), res))
			return at
		}
		require.True(t, time.Now().Before(deadline), "capacity not back by the deadline")
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReleaseAfterTheClientWentAway: the request's context is cancelled
// (the client hung up) before the middleware releases; the release still
// reaches Redis, on standalone and Cluster, and frees the place at once.
func TestReleaseAfterTheClientWentAway(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			l := leaseLimiter(t, mustNew(t, client), leasePrefix(t, client), []core.Limit{core.Concurrent(1)})
			ctx, cancel := context.WithCancel(context.Background())
			res, err := l.Allow(ctx, "alice")
			require.NoError(t, err)
			require.NotNil(t, res.Lease)
			cancel()
			require.NoError(t, l.Release(ctx, res))
			next, err := l.Allow(context.Background(), "alice")
			require.NoError(t, err)
			assert.True(t, next.Allowed, "the place is free again")
			require.NoError(t, l.Release(context.Background(), next))
			require.NoError(t, l.Release(context.Background(), next), "a second release is a no-op")
		})
	}
}

// TestAnOutageDoesNotLockOutClientsInFlight: the review's third lease
// defect. A client's request holds a lease when the network to Redis goes
// dark (a proxy that drops everything): its release is lost, and the
// breaker opens on the next failures. Releases used to be skipped while
// the breaker was open and never sent again, so the client stayed locked
// out for the whole lease TTL after Redis came back. Now the release is
// kept and sent again by the first calls that reach Redis: the client is
// admitted again within seconds of the recovery, far inside the minute of
// the TTL (the margin is for a loaded machine). One take per round trip
// and batched.
func TestAnOutageDoesNotLockOutClientsInFlight(t *testing.T) {
	modes := []struct {
		name     string
		batching redisstore.Option
	}{
		{"one take per round trip", redisstore.WithoutBatching()},
		{"batched", redisstore.WithBatching()},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := redistest.Standalone(t)
			proxy := redistest.NewProxy(t, srv.Addr())
			opts := srv.Options()
			opts.Addr = proxy.Addr()
			client := redisstore.NewClient(opts)
			t.Cleanup(func() { _ = client.Close() })
			limits := []core.Limit{core.Concurrent(1).WithLeaseTTL(time.Minute)}
			l, err := core.NewLimiter(safeStoreWith(t, client, mode.batching), core.WithLimits(limits...),
				core.WithPrefix(leasePrefix(t, srv.Client(t))), core.WithTimeout(budget),
				core.WithBreaker(core.BreakerConfig{Failures: 2, OpenFor: 100 * time.Millisecond}))
			require.NoError(t, err)
			ctx := context.Background()
			res, err := l.Allow(ctx, "alice")
			require.NoError(t, err)
			require.NotNil(t, res.Lease)

			proxy.SetBlackhole(true)
			assert.ErrorIs(t, l.Release(ctx, res), core.ErrStoreUnavailable, "the release is lost in the outage")
			for range 3 { // the breaker opens
				degraded, err := l.Allow(ctx, "bob")
				require.NoError(t, err)
				require.True(t, degraded.Degraded)
			}
			require.Equal(t, core.BreakerOpen, l.BreakerState())
			proxy.SetBlackhole(false)

			recovered := time.Now()
			for { // until Redis itself admits alice: a degraded admission fails open
				res, err := l.Allow(ctx, "alice")
				require.NoError(t, err)
				if res.Allowed && !res.Degraded {
					require.NoError(t, l.Release(ctx, res))
					break
				}
				require.Less(t, time.Since(recovered), leaseMargin, "alice still locked out: %+v", res.Binding())
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("alice admitted by Redis %v after the recovery", time.Since(recovered).Round(time.Millisecond))
		})
	}
}
