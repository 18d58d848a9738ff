package redisstore_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// switchover is how long after a replica took over (cluster promotion,
// Sentinel switch) callers may still see failures: the client notices and
// reloads the topology. The bound.
const switchover = 500 * time.Millisecond

// isolationTimeout is the decision deadline of the master-killed tests,
// which assert that no client of another master sees a degraded decision.
// The deadline is not what they are about: a killed master's connections
// fail at once (reset or refused), and the breaker and the batch queues
// are per master whatever the deadline. At the default 50 ms a loaded
// 2-core machine (other test packages running) made a few of the other
// masters' decisions miss it before the kill as well as after, failing
// the assertion for a reason that is not the kill; 250 ms absorbs that.
const isolationTimeout = 250 * time.Millisecond

// dayQuota never denies and counts every admission of a day in one
// fixed-window counter, so the admissions a failover lost can be read
// back.
var dayQuota = core.Limit{Rate: 1_000_000, Period: 24 * time.Hour, Algorithm: core.FixedWindow, Name: "day"}

// clusterIdentities returns n identities whose keys the master at master
// serves (on == true) or does not (on == false), as via sees the cluster.
func clusterIdentities(t *testing.T, hc *redistest.HACluster, via, master string, on bool, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; len(ids) < n; i += 16 {
		batch := make([]string, 16)
		keys := make([]string, 16)
		for j := range batch {
			batch[j] = "client-" + strconv.Itoa(i+j)
			keys[j] = "{" + core.SafeIdentity(batch[j]) + "}"
		}
		for j, s := range hc.Shards(t, via, keys...) {
			if (s.Master == master) == on && len(ids) < n {
				ids = append(ids, batch[j])
			}
		}
	}
	return ids
}

// TestClusterMasterKilled kills the master of one shard of a six-node
// cluster under traffic, through two limiters, one without a breaker and
// one with the default breaker (one per master: the store's
// [core.Capabilities] have a Shard):
//   - clients whose keys live on the other masters see no error at all,
//     with or without the breaker;
//   - clients of the dead master's slots see degraded (failed open)
//     decisions until at most 0.5 s after its replica was promoted;
//   - the over-admission the failover causes (increments the master
//     acknowledged but never replicated) is measured and logged.
func TestClusterMasterKilled(t *testing.T) {
	hc := redistest.ReplicatedCluster(t)
	client := redisstore.NewClusterClient(hc.Options())
	t.Cleanup(func() { _ = client.Close() })
	store := safeStore(t, client)
	l := faultLimiterTimeout(t, isolationTimeout, store, client, []core.Limit{dayQuota}, core.WithoutBreaker())
	withBreaker := faultLimiterTimeout(t, isolationTimeout, store, client, []core.Limit{dayQuota}, core.WithBreaker(core.BreakerConfig{}))

	hot := clusterIdentities(t, hc, hc.Addrs()[0], "", false, 1)[0] // any identity
	victim := hc.Shards(t, hc.Addrs()[0], "{"+hot+"}")[0]
	onVictim := clusterIdentities(t, hc, victim.Replica, victim.Master, true, 4)
	elsewhere := clusterIdentities(t, hc, victim.Replica, victim.Master, false, 8)
	isVictim := map[string]bool{hot: true}
	for _, id := range onVictim {
		isVictim[id] = true
	}

	day := time.Now().UTC().Truncate(24 * time.Hour)
	warmUp(t, l, append(append([]string{hot}, onVictim...), elsewhere...))
	warmUp(t, withBreaker, append(append([]string(nil), onVictim...), elsewhere...))
	tr := newTraffic()
	tr.watchServers(healthyMasters(t, hc, elsewhere, victim)...)
	tr.start("plain", l, append(append([]string(nil), onVictim...), elsewhere...), 1, pace)
	tr.start("plain", l, []string{hot, hot, hot, hot}, 1, pace/4)
	tr.start("breaker", withBreaker, append(append([]string(nil), onVictim...), elsewhere...), 1, pace)
	tr.sleepUntil(500 * time.Millisecond)
	promoted := watchRole(t, hc, victim.Replica, tr)
	hc.Kill(t, victim.Master)
	killedAt := tr.now()
	var promotedAt time.Duration
	select {
	case promotedAt = <-promoted:
	case <-time.After(20 * time.Second):
		t.Fatal("the replica was not promoted within 20 s")
	}
	tr.sleepUntil(promotedAt + 1500*time.Millisecond)
	all := tr.Stop()
	recs, recsb := of(all, "plain"), of(all, "breaker")

	t.Logf("master killed at %s; replica promoted %s later", killedAt.Round(time.Millisecond), (promotedAt - killedAt).Round(time.Millisecond))
	for _, tt := range []struct {
		name string
		recs []record
	}{{"no breaker", recs}, {"default breaker", recsb}} {
		requireNoBugs(t, tt.recs, tt.name)
		victimRecs := where(tt.recs, func(r record) bool { return isVictim[r.identity] })
		otherRecs := where(tt.recs, func(r record) bool { return !isVictim[r.identity] })
		assertNoneDegraded(t, otherRecs, tt.name+": clients of the other masters")
		failed := degraded(victimRecs)
		require.NotEmpty(t, failed, "%s: the dead master's clients saw the outage", tt.name)
		last := failed[0].end()
		for _, r := range failed {
			last = max(last, r.end())
		}
		t.Logf("%s: dead master's clients saw %d degraded decisions (%d by the open breaker), the last ending %s after the kill, %s after the promotion; other masters' clients: %d decisions, %d degraded",
			tt.name, len(failed), len(where(failed, record.breakerOpen)), (last - killedAt).Round(time.Millisecond),
			(last - promotedAt).Round(time.Millisecond), len(otherRecs), len(degraded(otherRecs)))
		assert.LessOrEqual(t, last-promotedAt, switchover, "%s: errors after the promotion", tt.name)
	}

	measureOverAdmission(t, l, recs, hot, killedAt, day)
}

// watchRole polls the role of the node at addr every 5 ms until t ends and
// sends when it first reports itself master.
func watchRole(t *testing.T, hc *redistest.HACluster, addr string, tr *traffic) <-chan time.Duration {
	promoted := make(chan time.Duration, 1)
	ctx := t.Context()
	go func() {
		for ctx.Err() == nil {
			if hc.Role(addr, 100*time.Millisecond) == "master" {
				promoted <- tr.now()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return promoted
}

// measureOverAdmission compares the admissions the hot identity's callers
// were told of with the count the new master holds: the difference is the
// increments the dead master acknowledged but never replicated, which the
// new master will admit again. Asynchronous replication loses at most what
// the replica had not received when the master died: far less than a
// second's worth here (assert), at most about one window's worth per key in
// general.
func measureOverAdmission(t *testing.T, l *core.Limiter, recs []record, hot string, killedAt time.Duration, day time.Time) {
	t.Helper()
	if now := time.Now().UTC().Truncate(24 * time.Hour); !now.Equal(day) {
		t.Logf("the day window changed during the test: over-admission not measured")
		return
	}
	var admitted, lastSecond int64
	for _, r := range recs {
		if r.identity == hot && r.err == nil && !r.res.Degraded && r.res.Allowed {
			admitted++
			if r.end() >= killedAt-time.Second && r.end() < killedAt {
				lastSecond++
			}
		}
	}
	res, err := l.Take(context.Background(), core.Request{Identity: hot}) // a peek
	require.NoError(t, err)
	require.False(t, res.Degraded)
	counted := dayQuota.Rate - res.Decision(0).Remaining
	lost := admitted - counted
	t.Logf("over-admission: %d admissions acknowledged to the hot key's callers, %d counted by the new master: %d lost increments (%d admitted in the last second before the kill)",
		admitted, counted, lost, lastSecond)
	assert.LessOrEqual(t, lost, lastSecond, "increments lost in the failover")
}

// TestClusterManualFailover runs CLUSTER FAILOVER on a healthy cluster under
// traffic through two limiters that differ only in their timeout. A manual
// failover loses no write: the master stops writes until its replica has
// caught up and taken over, and it answers them (with MOVED, which the
// client follows at once) only when it learns of the takeover, 40-50 ms
// after the replica's promotion here. So:
//   - with a 150 ms timeout, no decision is degraded;
//   - with the default 50 ms, the decisions of the failed-over shard's
//     clients that are in flight during that pause may fail open; every
//     other decision comes from Redis.
//
// A decision in flight while the whole test process stalls (a loaded CI
// machine) may time out whatever Redis does: the stall meter of the
// traffic excuses those, and the log counts them.
func TestClusterManualFailover(t *testing.T) {
	hc := redistest.ReplicatedCluster(t)
	client := redisstore.NewClusterClient(hc.Options())
	t.Cleanup(func() { _ = client.Close() })
	store := safeStore(t, client)
	short := faultLimiter(t, store, client, []core.Limit{bigLimit}, core.WithBreaker(core.BreakerConfig{}))
	long := faultLimiterTimeout(t, 150*time.Millisecond, store, client, []core.Limit{bigLimit}, core.WithBreaker(core.BreakerConfig{}))
	ids := identities("client", 12)
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = "{" + id + "}"
	}
	shards := hc.Shards(t, hc.Addrs()[0], keys...)
	onShard := map[string]bool{}
	for i, s := range shards {
		onShard[ids[i]] = s == shards[0]
	}
	warmUp(t, short, ids)
	warmUp(t, long, ids)
	knowReplicas(t, client, 3)

	tr := newTraffic()
	tr.watchServers(healthyMasters(t, hc, ids, shards[0])...)
	tr.start("50ms", short, ids, 1, pace)
	tr.start("150ms", long, ids, 1, pace)
	tr.sleepUntil(healthyFor)
	failoverAt := tr.now()
	hc.Failover(t, shards[0].Replica)
	promotedAt := tr.now()
	demotedAt := waitRole(t, hc, shards[0].Master, "slave", tr)
	tr.sleepUntil(demotedAt + time.Second)
	all := tr.Stop()
	recs, recsLong := of(all, "50ms"), of(all, "150ms")

	requireNoBugs(t, recs)
	requireNoBugs(t, recsLong)
	failed, excused := unexcused(degraded(recs))
	t.Logf("CLUSTER FAILOVER: replica promoted after %s, old master demoted %s later; 50 ms timeout: %d decisions, %d degraded (%d more during stalls of the process or of a healthy server); 150 ms timeout: %d decisions, %d degraded, during the failover %s",
		(promotedAt - failoverAt).Round(time.Millisecond), (demotedAt - promotedAt).Round(time.Millisecond),
		len(recs), len(failed), excused, len(recsLong), len(degraded(recsLong)),
		latencyOf(where(recsLong, func(r record) bool { return r.end() >= failoverAt && r.start <= demotedAt })))
	assertNoneDegraded(t, recsLong, "degraded decisions with a 150 ms timeout")
	for _, r := range failed {
		assert.True(t, onShard[r.identity], "degraded decision of %s, a client of another shard", r.identity)
		assert.True(t, r.end() >= failoverAt && r.start <= demotedAt, "degraded decision from %s to %s, not in flight during the failover (%s to %s)",
			r.start, r.end(), failoverAt, demotedAt)
	}
}

// waitRole polls the node at addr until it reports role, for at most 5 s,
// and returns when it did.
func waitRole(t *testing.T, hc *redistest.HACluster, addr, role string, tr *traffic) time.Duration {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for hc.Role(addr, 100*time.Millisecond) != role {
		require.True(t, time.Now().Before(deadline), "%s is not %s after 5 s", addr, role)
		time.Sleep(time.Millisecond)
	}
	return tr.now()
}

// knowReplicas makes client load the cluster's slot map and connect to
// every replica, as a client that has run for longer than its
// ClusterStateReloadInterval has. A replica appears in CLUSTER SLOTS once
// the nodes gossiped that it replicated a write (the warm-up wrote to
// every shard), so this polls for up to 5 s. A client that just started
// would meet a promoted replica with no connection to it, and pay a dial
// and a handshake on top of the failover.
func knowReplicas(t *testing.T, client *redis.ClusterClient, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var seen atomic.Int64
		err := client.ForEachSlave(context.Background(), func(ctx context.Context, c *redis.Client) error {
			seen.Add(1)
			return c.Ping(ctx).Err()
		})
		require.NoError(t, err)
		if seen.Load() == int64(n) {
			return
		}
		require.True(t, time.Now().Before(deadline), "the client knows %d replicas, want %d", seen.Load(), n)
		time.Sleep(50 * time.Millisecond)
	}
}
