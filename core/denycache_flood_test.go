package core_test

import (
	"context"
	"regexp"
	"strconv"
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

const floodClient = "198.51.100.66"

var evalCalls = regexp.MustCompile(`cmdstat_eval(?:sha)?:calls=(\d+)`)

// scriptCalls returns how many EVAL and EVALSHA commands the server ran.
func scriptCalls(t testing.TB, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	n := 0
	for _, m := range evalCalls.FindAllStringSubmatch(info, -1) {
		v, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		n += v
	}
	return n
}

// flood makes goroutines hammer one client's key through every limiter
// until d has passed, and returns how many requests were made and admitted.
func flood(limiters []*core.Limiter, goroutines int, d time.Duration) (requests, admitted int64) {
	var wg sync.WaitGroup
	var req, ok atomic.Int64
	deadline := time.Now().Add(d)
	for i := range goroutines {
		l := limiters[i%len(limiters)]
		wg.Go(func() {
			for time.Now().Before(deadline) {
				res, err := l.Allow(context.Background(), floodClient)
				req.Add(1)
				if err == nil && res.Allowed {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return req.Load(), ok.Load()
}

func newFloodLimiters(t testing.TB, srv *redistest.Server, nodes int, limit core.Limit) []*core.Limiter {
	t.Helper()
	prefix := redistest.Prefix(t)
	var ls []*core.Limiter
	for _, c := range srv.Clients(t, nodes) {
		store, err := redisstore.New(c)
		require.NoError(t, err)
		// Default options otherwise: the deny cache is on by default.
		l, err := core.NewLimiter(store, core.WithLimits(limit), core.WithPrefix(prefix),
			core.WithTimeout(time.Second))
		require.NoError(t, err)
		ls = append(ls, l)
	}
	return ls
}

// TestDenyCacheBoundsStoreCallsUnderAFlood: with default options, a blocked
// client hammering two app nodes costs Redis at most one call per RetryAfter
// per node, beyond the calls that were admitted. The client is blocked on both nodes before
// the flood starts (the steady state; before its first denial every
// concurrent request reaches the store). Margin: partial intervals at both
// ends of the flood count as whole ones.
func TestDenyCacheBoundsStoreCallsUnderAFlood(t *testing.T) {
	srv := redistest.Dedicated(t)
	admin := srv.Client(t)
	const nodes, d = 2, 1500 * time.Millisecond
	// Burst 1, so the client stays blocked even when the whole process is
	// descheduled for a while (seen on a loaded machine: 900 ms with no
	// request): a larger burst refills in such a pause, the client is no
	// longer blocked, and its concurrent requests rightly reach the store.
	// RetryAfter after exhaustion: at most 100 ms.
	limit := core.PerSecond(10).WithBurst(1).WithName("s")
	limiters := newFloodLimiters(t, srv, nodes, limit)
	for _, l := range limiters { // block the client on every node first: the steady state
		for {
			res, err := l.Allow(context.Background(), floodClient)
			require.NoError(t, err)
			if !res.Allowed {
				break
			}
		}
	}
	before := scriptCalls(t, admin)

	start := time.Now()
	requests, admitted := flood(limiters, 32, d)
	elapsed := time.Since(start) // longer than d on a loaded machine: the bound follows it

	calls := int64(scriptCalls(t, admin) - before)
	perInterval := int64(elapsed/limit.Interval()) + 2 // the intervals the flood spans, counting partial ones at both ends
	// Each node also reads its controls once per ControlSyncEvery, in a
	// script call of its own.
	controlReads := int64(elapsed/core.ControlSyncEvery) + 2
	bound := admitted + nodes*(perInterval+controlReads)
	t.Logf("%d requests, %d admitted, %d Redis calls (bound %d: admitted + %d nodes x (%d intervals + %d reads of the controls))",
		requests, admitted, calls, bound, nodes, perInterval, controlReads)
	assert.Greater(t, requests, 10*bound, "the flood must be much larger than the bound for the test to mean anything")
	assert.LessOrEqual(t, calls, bound)
	assert.LessOrEqual(t, admitted, int64(elapsed/limit.Interval())+2, "the deny cache must never admit more than the refill")
}

// BenchmarkDenyCacheFlood reports Redis calls per request for a blocked
// client flooding one node, with the deny cache turned off and with the
// default (on).
func BenchmarkDenyCacheFlood(b *testing.B) {
	srv := redistest.Dedicated(b)
	admin := srv.Client(b)
	limit := core.PerSecond(10).WithName("s")
	for _, cached := range []bool{false, true} {
		name := "no-deny-cache"
		if cached {
			name = "deny-cache"
		}
		b.Run(name, func(b *testing.B) {
			store, err := redisstore.New(srv.Client(b))
			require.NoError(b, err)
			opts := []core.Option{core.WithLimits(limit), core.WithPrefix(redistest.Prefix(b))}
			if !cached {
				opts = append(opts, core.WithDenyCache(0))
			}
			l, err := core.NewLimiter(store, opts...)
			require.NoError(b, err)
			before := scriptCalls(b, admin)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, _ = l.Allow(context.Background(), floodClient)
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(scriptCalls(b, admin)-before)/float64(b.N), "redis-calls/op")
		})
	}
}
