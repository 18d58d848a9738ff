//go:build linux

package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/internal/pgtest"
)

// The bounds of the fault test.
const (
	// faultTimeout is the limiters' decision budget (core.WithTimeout).
	faultTimeout = 100 * time.Millisecond
	// faultStall bounds how long after its deadline a decision may end: the
	// deadline fires, pgx closes the connection, the limiter applies its
	// failure mode. A decision held by anything else (a socket read, the
	// pool's wait for a connection, a retry) ends seconds late; a loaded
	// two-core machine adds scheduling and GC pauses of tens of ms.
	faultStall = 250 * time.Millisecond
	// quietAfter is the part at the end of each recovery in which no
	// decision may be degraded: the breaker (open 500 ms by default) has
	// closed and the pool has replaced its dead connections by then.
	quietAfter = 700 * time.Millisecond
)

// A sample is one decision of the traffic.
type sample struct {
	at, took time.Duration // since the start of the traffic
	degraded bool
	err      error
}

// traffic runs callers goroutines deciding through lim until stop, and
// returns what each decision said, its times counted from start.
func traffic(lim *core.Limiter, callers int, start time.Time, stop <-chan struct{}) func() []sample {
	var mu sync.Mutex
	var all []sample
	var wg sync.WaitGroup
	for g := range callers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				res, err := lim.Allow(context.Background(), fmt.Sprintf("caller-%d-%d", g, i%16))
				s := sample{at: t0.Sub(start), took: time.Since(t0), degraded: res.Degraded, err: err}
				mu.Lock()
				all = append(all, s)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	return func() []sample { wg.Wait(); return all }
}

// TestServerFaultsUnderTraffic runs 8 callers through a limiter (default
// breaker, fail open, 100 ms budget) on a throwaway server while the server
// is frozen (SIGSTOP) for 1.5 s, then crashed (SIGKILL) and started again
// after 1 s: no decision is an error (no 5xx), every decision ends within
// its deadline + 250 ms, the faults do degrade decisions (the test
// tested), none is degraded at the end of each recovery, and the store is
// exact again afterwards.
func TestServerFaultsUnderTraffic(t *testing.T) {
	srv := pgtest.Dedicated(t)
	cfg, err := pgxpool.ParseConfig(srv.URL())
	require.NoError(t, err)
	cfg.MaxConns = 8
	db, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	store, err := pgstore.New(context.Background(), db, pgstore.WithSweep(0, 1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	prefix := fmt.Sprintf("fault%016x", rand.Uint64())
	lim, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(1_000_000).WithName("big")),
		core.WithPrefix(prefix), core.WithTimeout(faultTimeout))
	require.NoError(t, err)

	stop := make(chan struct{})
	mark := time.Now()
	wait := traffic(lim, 8, mark, stop)
	since := func() time.Duration { return time.Since(mark) }
	time.Sleep(300 * time.Millisecond)
	freezeAt := since()
	srv.Freeze(t)
	time.Sleep(1500 * time.Millisecond)
	srv.Thaw(t)
	thawAt := since()
	time.Sleep(2 * time.Second)
	crashAt := since()
	srv.Crash(t)
	time.Sleep(time.Second)
	srv.Start(t)
	startAt := since()
	time.Sleep(2500 * time.Millisecond)
	endAt := since()
	close(stop)
	samples := wait()

	var worst time.Duration
	for _, s := range samples {
		require.NoError(t, s.err, "a decision at %v failed: a 5xx", s.at)
		worst = max(worst, s.took)
	}
	assert.LessOrEqual(t, worst, faultTimeout+faultStall, "the slowest decision")
	assert.Positive(t, degraded(samples, freezeAt, thawAt), "the frozen server degraded no decision: the test did not test")
	assert.Positive(t, degraded(samples, crashAt, startAt), "the crashed server degraded no decision: the test did not test")
	// A decision started less than its budget (and stall) before the crash
	// may end in it, rightly degraded: the quiet part ends before those.
	assert.Zero(t, degraded(samples, crashAt-quietAfter, crashAt-faultTimeout-faultStall),
		"degraded decisions at the end of the recovery from the freeze")
	assert.Zero(t, degraded(samples, endAt-quietAfter, endAt), "degraded decisions at the end of the recovery from the crash")
	t.Logf("%d decisions; slowest %v; p99 %v; degraded while frozen %d, while down %d",
		len(samples), worst, p99(samples), degraded(samples, freezeAt, thawAt), degraded(samples, crashAt, startAt))

	exact, err := core.NewLimiter(store, core.WithLimits(core.PerHour(5)), core.WithPrefix(prefix), core.WithTimeout(time.Second))
	require.NoError(t, err)
	var admitted int
	for range 10 {
		res, err := exact.Allow(context.Background(), "after-the-faults")
		require.NoError(t, err)
		require.False(t, res.Degraded, "a decision after the recovery is degraded")
		if res.Allowed {
			admitted++
		}
	}
	assert.Equal(t, 5, admitted, "admitted of 10 by a limit of 5 per hour after the recovery")
}

// degraded counts the degraded decisions that started in [from, to).
func degraded(samples []sample, from, to time.Duration) int {
	n := 0
	for _, s := range samples {
		if s.degraded && s.at >= from && s.at < to {
			n++
		}
	}
	return n
}

// p99 returns the 99th percentile of how long the decisions took.
func p99(samples []sample) time.Duration {
	d := make([]time.Duration, len(samples))
	for i, s := range samples {
		d[i] = s.took
	}
	slices.Sort(d)
	return d[len(d)*99/100]
}
