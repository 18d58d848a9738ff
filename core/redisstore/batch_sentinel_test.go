package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
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

// TestBatchingSentinelMasterKilled is TestSentinelMasterKilled through a
// batching store (dayQuota instead of bigLimit, to count charges across a
// minute boundary): decisions fail open while there is no master and come
// from the new master within 0.5 s of the switch; no take was charged
// twice (the new master counts at most the admissions plus the takes that
// may have run: the failover may lose writes, not double them).
func TestBatchingSentinelMasterKilled(t *testing.T) {
	g := redistest.Sentinel(t, 3)
	opts := g.FailoverOptions()
	opts.PoolSize = 128
	client := redisstore.NewFailoverClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	var calls takeCounter
	client.AddHook(&calls)
	l := faultLimiter(t, batchedSafeStore(t, client), client, []core.Limit{dayQuota},
		core.WithBreaker(core.BreakerConfig{Failures: 5, OpenFor: 100 * time.Millisecond}))

	ids := identities("client", 8)
	day := time.Now().UTC().Truncate(24 * time.Hour)
	warmUp(t, l, ids)
	before := charges(t, l, ids)
	tr := startTraffic(l, ids, 1, pace)
	switched := watchSwitch(t, g.SentinelAddrs(), tr)
	tr.sleepUntil(healthyFor)
	healthy := calls.counts()
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
	t.Logf("healthy: %d takes, %d in %d pipelines", healthy.takes, healthy.pipelined, healthy.pipelines)
	assert.Positive(t, healthy.pipelines, "pipelines before the kill")
	assert.LessOrEqual(t, last-switchedAt, switchover, "errors after the switch")
	if now := time.Now().UTC().Truncate(24 * time.Hour); now.Equal(day) {
		assertChargedOnce(t, "sentinel", recs, before, charges(t, l, ids), false)
	}
}

// TestBatchingSentinelManualFailover runs SENTINEL FAILOVER under traffic
// through a batching store: the old master stays up, keeps taking writes
// until the client follows +switch-master (those admissions are lost when
// it resyncs from the new master: over-admission, logged), and then
// becomes a replica. A take still sent to it then would be answered
// READONLY: such decisions fail open (unavailable, never a bug). Decisions
// come from the new master within 0.5 s of the switch, and no take was
// charged twice. go-redis usually switches before the old master is
// demoted, so READONLY is rarely seen here; TestBatchingDemotedMaster
// provokes it.
func TestBatchingSentinelManualFailover(t *testing.T) {
	g := redistest.Sentinel(t, 3)
	opts := g.FailoverOptions()
	opts.PoolSize = 128
	client := redisstore.NewFailoverClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	var calls takeCounter
	client.AddHook(&calls)
	l := faultLimiter(t, batchedSafeStore(t, client), client, []core.Limit{dayQuota}, core.WithoutBreaker())
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: g.SentinelAddrs()[0]})
	t.Cleanup(func() { _ = sentinel.Close() })

	ids := identities("client", 8)
	day := time.Now().UTC().Truncate(24 * time.Hour)
	warmUp(t, l, ids)
	before := charges(t, l, ids)
	tr := startTraffic(l, ids, 1, pace)
	switched := watchSwitch(t, g.SentinelAddrs(), tr)
	tr.sleepUntil(healthyFor)
	healthy := calls.counts()
	failoverAt := tr.now()
	require.NoError(t, sentinel.Failover(context.Background(), redistest.SentinelMasterName).Err())
	var switchedAt time.Duration
	select {
	case switchedAt = <-switched:
	case <-time.After(30 * time.Second):
		t.Fatal("the sentinels did not switch masters within 30 s")
	}
	tr.sleepUntil(switchedAt + recoverFor)
	recs := tr.Stop()

	requireNoBugs(t, recs, "READONLY is no bug")
	failed := degraded(recs)
	readOnly := where(failed, func(r record) bool { return strings.Contains(fmt.Sprint(r.res.Err), "READONLY") })
	last := switchedAt
	for _, r := range failed {
		last = max(last, r.end())
		assert.ErrorIs(t, r.res.Err, core.ErrStoreUnavailable)
	}
	t.Logf("SENTINEL FAILOVER at %s; switched %s later; %d degraded decisions (%d READONLY), the last ending %s after the switch; healthy: %d takes, %d in %d pipelines",
		failoverAt.Round(time.Millisecond), (switchedAt - failoverAt).Round(time.Millisecond), len(failed), len(readOnly),
		(last - switchedAt).Round(time.Millisecond), healthy.takes, healthy.pipelined, healthy.pipelines)
	assert.Positive(t, healthy.pipelines, "pipelines before the failover")
	assert.LessOrEqual(t, last-switchedAt, switchover, "errors after the switch")
	if now := time.Now().UTC().Truncate(24 * time.Hour); now.Equal(day) {
		// Writes to the old master after the promotion are lost.
		assertChargedOnce(t, "sentinel manual failover", recs, before, charges(t, l, ids), false)
	}
}

// TestBatchingDemotedMaster: a master demoted to a replica (REPLICAOF, as
// Sentinel does to an old master) answers batched takes READONLY. Each
// fails with an error wrapping core.ErrStoreUnavailable (a limiter fails
// open or closed, never reports a bug), the takes did share pipelines, and
// the server got each take once: nothing was resent.
func TestBatchingDemotedMaster(t *testing.T) {
	srv, newMaster := redistest.Dedicated(t), redistest.Dedicated(t)
	checker := srv.Client(t)
	client := patientClient(srv.Options())
	t.Cleanup(func() { _ = client.Close() })
	store, kb := newStore(t, client, redisstore.WithBatching())
	limits := []core.Limit{dayQuota}
	ctx := context.Background()
	_, err := store.Take(ctx, nil, kb.AppendKeys(nil, "warm", limits), limits, 1) // dials, loads the script
	require.NoError(t, err)

	host, port, err := net.SplitHostPort(newMaster.Addr())
	require.NoError(t, err)
	require.NoError(t, checker.SlaveOf(ctx, host, port).Err())
	t.Cleanup(func() { _ = checker.SlaveOf(context.Background(), "NO", "ONE").Err() })
	require.Eventually(t, func() bool {
		info, err := checker.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, 10*time.Second, 10*time.Millisecond, "the demoted master replicates the new one")
	var calls takeCounter
	client.AddHook(&calls)
	runsBefore := scriptRuns(t, checker)

	const goroutines, takesEach = 64, 20
	var readOnly, other atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		keys := kb.AppendKeys(nil, "caller-"+strconv.Itoa(g), limits)
		wg.Go(func() {
			for range takesEach {
				_, err := store.Take(ctx, nil, keys, limits, 1)
				if errors.Is(err, core.ErrStoreUnavailable) && strings.Contains(err.Error(), "READONLY") {
					readOnly.Add(1)
				} else {
					other.Add(1)
					t.Log(err)
				}
			}
		})
	}
	wg.Wait()
	runs := scriptRuns(t, checker) - runsBefore

	t.Logf("%d takes: %d READONLY; sent %d script commands, %d in %d pipelines; the server got %d",
		goroutines*takesEach, readOnly.Load(), calls.takes.Load(), calls.pipelined.Load(), calls.pipelines.Load(), runs)
	assert.Zero(t, other.Load(), "takes not answered READONLY")
	assert.Positive(t, calls.pipelines.Load(), "pipelines")
	assert.Equal(t, int64(goroutines*takesEach), calls.takes.Load()-calls.noScript.Load(), "script commands sent: one per take (and an EVAL per NOSCRIPT)")
	assert.Equal(t, calls.takes.Load(), runs, "script commands the server got: those sent, none resent")
}
