package redisstore_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestSentinelMasterKilled kills the master of a Sentinel group (one
// replica, three sentinels, quorum two) under traffic through a failover
// client and a limiter with a breaker: decisions fail open while there is
// no master, and come from the new master within 0.5 s of the sentinels'
// switch (the first +switch-master).
//
// The breaker probes every 100 ms, so its own wait is short, and it keeps
// the dials that fail during the outage (5 + 10 per second: 25 for the
// usual 2 s failover, 85 when an election fails and the sentinels retry 6 s
// later) below the pool size (128): after PoolSize failed dials go-redis
// stops dialing and probes once a second (go-redis issue #3062), which
// would add up to a second to the recovery. docs/operations.md explains
// how to size both.
func TestSentinelMasterKilled(t *testing.T) {
	g := redistest.Sentinel(t, 3)
	opts := g.FailoverOptions()
	opts.PoolSize = 128
	client := redisstore.NewFailoverClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	l := faultLimiter(t, safeStore(t, client), client, []core.Limit{bigLimit},
		core.WithBreaker(core.BreakerConfig{Failures: 5, OpenFor: 100 * time.Millisecond}))

	ids := identities("client", 8)
	warmUp(t, l, ids)
	tr := startTraffic(l, ids, 1, pace)
	switched := watchSwitch(t, g.SentinelAddrs(), tr)
	tr.sleepUntil(healthyFor)
	g.KillMaster(t)
	killedAt := tr.now()
	var switchedAt time.Duration
	select {
	case switchedAt = <-switched:
	case <-time.After(30 * time.Second):
		t.Fatal("the sentinels did not switch masters within 30 s")
	}
	tr.sleepUntil(switchedAt + recoverFor)
	recs := tr.Stop()

	requireNoBugs(t, recs)
	failed := degraded(recs)
	require.NotEmpty(t, failed, "the outage was seen")
	last := failed[0].end()
	for _, r := range failed {
		last = max(last, r.end())
	}
	recovered, ok := firstOK(recs, switchedAt)
	require.True(t, ok, "no decision came from the new master")
	t.Logf("master killed at %s; sentinels switched %s later; %d degraded decisions, the last ending %s after the switch; first decision from the new master %s after the switch",
		killedAt.Round(time.Millisecond), (switchedAt - killedAt).Round(time.Millisecond), len(failed),
		(last - switchedAt).Round(time.Millisecond), (recovered - switchedAt).Round(time.Millisecond))
	assert.LessOrEqual(t, last-switchedAt, switchover, "errors after the switch")
}

// watchSwitch subscribes to +switch-master on every sentinel and sends when
// the first message arrives: the leader's switch, which the other
// sentinels (and the clients that ask them) learn of a little later. The
// subscriptions are confirmed before it returns.
func watchSwitch(t *testing.T, addrs []string, tr *traffic) <-chan time.Duration {
	t.Helper()
	switched := make(chan time.Duration, len(addrs))
	for _, addr := range addrs {
		sentinel := redis.NewSentinelClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = sentinel.Close() })
		sub := sentinel.Subscribe(t.Context(), "+switch-master")
		t.Cleanup(func() { _ = sub.Close() })
		_, err := sub.Receive(t.Context())
		require.NoError(t, err, "subscribe to +switch-master on %s", addr)
		go func() {
			if _, ok := <-sub.Channel(); ok {
				switched <- tr.now()
			}
		}()
	}
	return switched
}
