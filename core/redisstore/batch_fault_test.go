package redisstore_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// The fault tests of fault_test.go, through a batching store: the same
// faults, traffic and bounds.

// batchedSafeStore is safeStore with batching.
func batchedSafeStore(t *testing.T, client redis.Scripter) *redisstore.Store {
	t.Helper()
	require.Empty(t, redisstore.CheckClient(client, budget), "the fault tests use safe clients")
	s, err := redisstore.New(client, redisstore.WithBatching())
	require.NoError(t, err)
	return s
}

// TestBatchingSlowOrFrozen is TestSlowOrFrozenStandalone through a
// batching store, with 8 callers and with 64 (whose takes share
// pipelines): decisions end within the deadline + lateness (p99; 64
// callers: crowdLateness), none later than the deadline + stall; the open
// breaker answers in < 1 ms and lets only its probes through; decisions
// come from Redis again within a second of the recovery.
func TestBatchingSlowOrFrozen(t *testing.T) {
	for _, tt := range slowdowns {
		for _, callers := range []int{8, 64} {
			t.Run(fmt.Sprintf("%s, %d callers", tt.name, callers), func(t *testing.T) {
				late, openBound := lateness, openLatency
				if callers > 8 {
					late, openBound = crowdLateness, crowdOpenLatency
				}
				client, checker, startFault, endFault := tt.setup(t)
				var calls takeCounter
				client.AddHook(&calls)
				breaker := core.BreakerConfig{Failures: 5, OpenFor: 500 * time.Millisecond} // the defaults
				l := faultLimiter(t, batchedSafeStore(t, client), checker, []core.Limit{bigLimit}, core.WithBreaker(breaker))
				t.Cleanup(endFault) // before the TTL check

				ids := identities("client", callers)
				warmUp(t, l, ids)
				tr := startTraffic(l, ids, 1, pace)
				tr.sleepUntil(healthyFor)
				faultAt := tr.now()
				healthyTakes, healthyTrips, healthyPipelines := calls.takes.Load(), calls.roundTrips.Load(), calls.pipelines.Load()
				startFault()
				openAt := waitBreakerOpen(t, l, tr)
				// Takes the breaker let through before it opened may still be
				// queued; by their deadline they are sent or dropped.
				tr.sleepUntil(openAt + budget + late)
				callsAtOpen := calls.takes.Load()
				tr.sleepUntil(faultAt + faultFor)
				callsWhileOpen := calls.takes.Load() - callsAtOpen
				endAt := tr.now()
				endFault()
				tr.sleepUntil(endAt + recoverFor)
				recs := tr.Stop()

				require.Empty(t, bugs(recs))
				t.Logf("healthy: %d takes in %d round trips (%d pipelines)",
					healthyTakes, healthyTrips, healthyPipelines)
				t.Logf("all decisions: %s; past the deadline by %s", latencyOf(recs), latenessOf(recs))
				assertOnTime(t, recs, late)
				assertNoneDegraded(t, where(recs, func(r record) bool { return r.end() < faultAt }), "healthy before the fault")

				open := latencyOf(where(recs, record.breakerOpen))
				probes := int64((endAt-openAt)/breaker.OpenFor) + 1
				t.Logf("breaker opened %s after the fault; open-breaker decisions: %s; script calls while open: %d (probes allowed %d)",
					(openAt - faultAt).Round(time.Millisecond), open, callsWhileOpen, probes)
				assert.Less(t, open.p99, openBound, "p99 of decisions with the breaker open")
				assert.LessOrEqual(t, callsWhileOpen, probes, "Redis calls while the breaker is open: its probes only")

				recovered, ok := firstOK(recs, endAt)
				require.True(t, ok, "no decision came from Redis after the fault ended")
				t.Logf("back to enforcing %s after the fault ended", (recovered - endAt).Round(time.Millisecond))
				assert.LessOrEqual(t, recovered-endAt, time.Second, "recovery")
				assertNoneDegraded(t, where(recs, func(r record) bool { return r.start > endAt+time.Second }),
					"degraded decisions more than a second after recovery")
			})
		}
	}
}

// waitBreakerOpen polls until the limiter's breaker is open and returns
// when.
func waitBreakerOpen(t *testing.T, l *core.Limiter, tr *traffic) time.Duration {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.BreakerState() != core.BreakerOpen {
		require.True(t, time.Now().Before(deadline), "the breaker did not open")
		time.Sleep(time.Millisecond)
	}
	return tr.now()
}

// TestBatchingKilledAndRestartedEmpty is TestKilledAndRestartedEmpty
// through a batching store: every decision fails open during the outage;
// after the restart the script comes back through NOSCRIPT (lone takes:
// Script.Run's EVAL; pipelined ones: the batcher's resend) with no error
// reaching a caller; no goroutine or connection is left behind.
func TestBatchingKilledAndRestartedEmpty(t *testing.T) {
	srv := redistest.Dedicated(t)
	checker := srv.Client(t)
	goroutinesBefore := runtime.NumGoroutine()
	opts := srv.Options()
	opts.ClientName = "rl-fault"
	client := redisstore.NewClient(opts)
	l := faultLimiter(t, batchedSafeStore(t, client), checker, []core.Limit{bigLimit}, core.WithBreaker(core.BreakerConfig{}))
	ids := identities("client", 8)
	warmUp(t, l, ids)

	tr := startTraffic(l, ids, 1, pace)
	tr.sleepUntil(healthyFor)
	srv.Kill(t)
	killedAt := tr.now()
	tr.sleepUntil(killedAt + time.Second)
	restartAt := tr.now()
	srv.Restart(t)
	restartedAt := tr.now()
	tr.sleepUntil(restartedAt + 2*time.Second)
	recs := tr.Stop()

	require.Empty(t, bugs(recs), "no error reached a caller, NOSCRIPT included")
	outage := where(recs, func(r record) bool { return r.start >= killedAt && r.end() < restartAt })
	require.NotEmpty(t, outage)
	for _, r := range outage {
		require.True(t, r.res.Degraded && r.res.Allowed, "fail open during the outage: %+v", r.res)
	}
	recovered, ok := firstOK(recs, restartedAt)
	require.True(t, ok, "no decision came from Redis after the restart")
	t.Logf("outage: %d decisions, all failed open; back to enforcing %s after the restart",
		len(outage), (recovered - restartedAt).Round(time.Millisecond))
	assert.LessOrEqual(t, recovered-restartedAt, 2*time.Second, "recovery after the restart")

	ctx := context.Background()
	errorstats, err := checker.Info(ctx, "errorstats").Result()
	require.NoError(t, err)
	assert.Contains(t, errorstats, "errorstat_NOSCRIPT", "the restarted server answered NOSCRIPT")
	assert.Positive(t, commandCalls(t, checker)["eval"], "and got the script through EVAL")
	keys := redistest.ScanKeys(t, checker, "*")
	assert.Len(t, keys, len(ids), "one key per identity again")
	assertKeysExpire(t, checker, "*")

	maxConns := len(ids) + opts.MinIdleConns
	if opts.MinIdleConns == 0 {
		maxConns += runtime.GOMAXPROCS(0)
	}
	assertConnsTracked(t, client, checker, opts.ClientName, maxConns)

	require.NoError(t, client.Close())
	assertGoroutinesBack(t, goroutinesBefore)
}

// TestBatchingPoolExhaustion is TestPoolExhaustion through a batching
// store: 64 callers, a pool of 2 connections (and go-redis's pool for
// pipelines cut to 2 as well), +5 ms per round trip, no breaker. Decisions
// end within the deadline + crowdLateness (p99), none later than the
// deadline + stall; batching needs at most two connections at a time, so
// the pools serve most of them.
func TestBatchingPoolExhaustion(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	opts := srv.Options()
	opts.Addr, opts.PoolSize, opts.MinIdleConns, opts.PipelinePoolSize = proxy.Addr(), 2, 2, 2
	client := redisstore.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	var calls takeCounter
	client.AddHook(&calls)
	l := faultLimiter(t, batchedSafeStore(t, client), srv.Client(t), []core.Limit{bigLimit}, core.WithoutBreaker())
	ids := identities("caller", 64)
	warmUp(t, l, ids)
	proxy.SetDelay(5 * time.Millisecond)

	tr := startTraffic(l, ids, 1, 0)
	tr.sleepUntil(faultFor)
	recs := tr.Stop()

	require.Empty(t, bugs(recs))
	served := len(recs) - len(degraded(recs))
	waited := where(recs, func(r record) bool { return poolWait(r.res.Err) })
	t.Logf("64 callers, pool of 2, +5 ms: %d decisions, %d from Redis, %d degraded (%d waiting for a connection); %s; past the deadline by %s; %d takes in %d round trips",
		len(recs), served, len(recs)-served, len(waited), latencyOf(recs), latenessOf(recs), calls.takes.Load(), calls.roundTrips.Load())
	assertOnTime(t, recs, crowdLateness)
	assert.Greater(t, served, len(recs)/2, "the pool served most decisions")
}

// TestBatchingSlowedWithinBudget: a server 10 ms away serves 64 callers
// with a 50 ms budget, no breaker. A take waits for the pipeline in flight
// and then its own (about two round trips), so nearly every
// decision comes from Redis, and the decisions that reach the deadline
// overrun it by at most crowdLateness (p99). A pipeline runs until its
// latest deadline: the oldest take giving up does not cut it short for the
// others. (At 20 ms the proxy also delays each new connection's handshake
// by two round trips, and a connection closed by a timeout is never
// replaced in time, batched or not; see TestPoolExhaustion.)
func TestBatchingSlowedWithinBudget(t *testing.T) {
	srv := redistest.Standalone(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	opts := srv.Options()
	opts.Addr = proxy.Addr()
	client := redisstore.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	var calls takeCounter
	client.AddHook(&calls)
	l := faultLimiter(t, batchedSafeStore(t, client), srv.Client(t), []core.Limit{bigLimit}, core.WithoutBreaker())
	ids := identities("caller", 64)
	warmUp(t, l, ids)
	proxy.SetDelay(10 * time.Millisecond)

	tr := startTraffic(l, ids, 1, pace)
	tr.sleepUntil(faultFor)
	recs := tr.Stop()

	require.Empty(t, bugs(recs))
	served := len(recs) - len(degraded(recs))
	t.Logf("64 callers, +10 ms: %d decisions, %d from Redis; %s; past the deadline by %s; %d takes in %d round trips",
		len(recs), served, latencyOf(recs), latenessOf(recs), calls.takes.Load(), calls.roundTrips.Load())
	assertOnTime(t, recs, crowdLateness)
	assert.Greater(t, served, len(recs)*9/10, "decisions from Redis")
}
