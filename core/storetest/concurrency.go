package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// The shape of the load of [RunConcurrency].
const (
	// concurrencyStores is how many stores (app nodes) share one state.
	concurrencyStores = 4
	// concurrencyGoroutines take at once in each phase, spread over the
	// stores.
	concurrencyGoroutines = 64
	// takesPerGoroutine makes 512 takes a phase, several times any quota.
	takesPerGoroutine = 8
)

// A phase is a burst of takes at one frozen instant, Start + at.
type phase struct {
	at time.Duration
	// admitted is how many takes of cost 1 the formulas admit.
	admitted int64
	// remaining is what a peek reports afterwards, per limit: a limit
	// charged for takes that were not admitted would report less.
	remaining []int64
}

// A concurrencyCase hammers one client's limits through phases.
type concurrencyCase struct {
	name   string
	limits []core.Limit
	phases []phase
	// movingBound, when not zero, must exceed the admissions of the phases
	// that fall in any moving Period (t − P, t] of limits[0].
	movingBound int64
}

// RunConcurrency checks that stores sharing one state stay exact under
// concurrent takes. newStores is called once per case with n and must
// return n stores sharing one state whose clock is now: for Redis, n stores
// on n separate clients (n app nodes); for an in-process store, the same
// store n times.
//
// In each case 64 goroutines spread over the stores hammer one client with
// 512 takes of cost 1 at a frozen instant, all released at once; then the
// clock moves and the next phase starts. The number admitted in each
// phase must be exactly what docs/algorithms.md gives (for the sliding
// window counter, that number also stays below its documented bound of
// 2 × Rate in any moving Period), and a peek after each phase must show
// every limit charged exactly for the admitted takes, which checks that
// multi-limit takes stay all-or-nothing.
//
// A limit with a [core.Lockout] is hammered the same way, phase after
// phase: exactly After − 1 denials are counted before each lockout, and
// each lockout's length shows its level went up by exactly one, so no
// store let two takes read the same count.
//
// When the stores hold leases ([core.Capabilities]) it also runs requests through a
// [core.Limiter] per store with a [core.Concurrency] limit beside a rate
// limit: 64 goroutines over 4 clients acquire, count themselves in flight,
// sleep, and release; no client is ever seen with more than N in flight,
// and none is left in flight at the end.
func RunConcurrency(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	for _, tt := range concurrencyTests(t) {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock()
			stores := newStores(t, clock.Now, concurrencyStores)
			require.Len(t, stores, concurrencyStores, "newStores must return n stores")
			keys := UniqueKeyBuilder(t).AppendKeys(nil, "hammered", tt.limits)
			for i, ph := range tt.phases {
				clock.SetOffset(ph.at)
				where := fmt.Sprintf("%s: phase %d at %v", tt.name, i+1, ph.at)
				assert.Equal(t, ph.admitted, hammer(t, stores, keys, tt.limits), "%s: admitted", where)
				peek := client{store: stores[0], keys: keys, limits: tt.limits}.take(t, 0)
				for j, d := range peek {
					assert.Equal(t, ph.remaining[j], d.Remaining, "%s: limit %d (%s): Remaining after the phase", where, j, tt.limits[j].Algorithm)
				}
			}
			if tt.movingBound > 0 {
				checkMovingBound(t, tt)
			}
		})
	}
	t.Run("Concurrency limit: in flight never exceeds N", func(t *testing.T) {
		testInFlight(t, newStores(t, NewClock().Now, concurrencyStores))
	})
	t.Run("Controls: concurrent writers on two clients lose no change", func(t *testing.T) {
		runControlConcurrency(t, newStores)
	})
	t.Run("Lockout: one lockout per After denials", func(t *testing.T) {
		clock := NewClock()
		stores := newStores(t, clock.Now, concurrencyStores)
		skipWithoutLockouts(t, stores[0])
		testLockoutConcurrency(t, stores, clock)
	})
}

// hammer makes the takes of one phase and returns how many were admitted.
func hammer(t *testing.T, stores []core.Store, keys []string, limits []core.Limit) int64 {
	var admitted, failed atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range concurrencyGoroutines {
		store := stores[g%len(stores)]
		wg.Go(func() {
			<-start
			ds := make([]core.Decision, 0, len(limits))
			for range takesPerGoroutine {
				var err error
				ds, err = store.Take(context.Background(), ds[:0], keys, limits, 1)
				if err != nil {
					failed.Add(1)
					once.Do(func() { firstErr = err })
					continue
				}
				if allDecisionsAllowed(ds) {
					admitted.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, firstErr, "%d of %d takes failed", failed.Load(), concurrencyGoroutines*takesPerGoroutine)
	return admitted.Load()
}

// checkMovingBound checks the admissions of the phases in every moving
// Period that ends at a phase.
func checkMovingBound(t *testing.T, tt concurrencyCase) {
	p := tt.limits[0].Period
	for i, end := range tt.phases {
		var sum int64
		for _, ph := range tt.phases[:i+1] {
			if ph.at > end.at-p {
				sum += ph.admitted
			}
		}
		assert.Less(t, sum, tt.movingBound, "%s: admitted in (%v, %v]", tt.name, end.at-p, end.at)
	}
}

// concurrencyTests are the phases of each case, computed by hand.
func concurrencyTests(t *testing.T) []concurrencyCase {
	newYork := mustLoadLocation(t, "America/New_York")
	bucket := core.Limit{Rate: 100, Period: 10 * sec, Burst: 50} // T = 100ms, B·T = 5s
	window := core.Limit{Rate: 100, Period: 10 * sec}
	bucketPhases := []phase{
		{at: 0, admitted: 50, remaining: []int64{0}},          // tat = 5s
		{at: 2500 * ms, admitted: 25, remaining: []int64{0}},  // (5s − 2.5s)/T; tat = 7.5s
		{at: 17500 * ms, admitted: 50, remaining: []int64{0}}, // full; tat = 22.5s
		{at: 22 * sec, admitted: 45, remaining: []int64{0}},   // (5s − 0.5s)/T
	}
	return []concurrencyCase{
		{name: "GCRA 100 per 10s, burst 50", limits: []core.Limit{bucket}, phases: bucketPhases},
		{name: "TokenBucket 100 per 10s, burst 50", limits: []core.Limit{bucket.WithAlgorithm(core.TokenBucket)}, phases: bucketPhases},
		{
			name:   "FixedWindow 100 per 10s",
			limits: []core.Limit{window.WithAlgorithm(core.FixedWindow)},
			phases: []phase{
				{at: 0, admitted: 100, remaining: []int64{0}},
				{at: 5 * sec, admitted: 0, remaining: []int64{0}},
				{at: 10*sec - us, admitted: 0, remaining: []int64{0}},
				{at: 10 * sec, admitted: 100, remaining: []int64{0}},
				{at: 25 * sec, admitted: 100, remaining: []int64{0}},
			},
		},
		{
			// used·P = prev·(P − e) + cur·P; each admission adds P.
			name:   "SlidingWindow 100 per 10s",
			limits: []core.Limit{window.WithAlgorithm(core.SlidingWindow)},
			phases: []phase{
				{at: 9990 * ms, admitted: 100, remaining: []int64{0}},
				{at: 15 * sec, admitted: 50, remaining: []int64{0}},   // 100·(5s/10s) used
				{at: 22500 * ms, admitted: 62, remaining: []int64{0}}, // 50·0.75 = 37.5 used
				{at: 27500 * ms, admitted: 25, remaining: []int64{0}}, // 50·0.25 + 62 = 74.5 used
			},
			// 150 pass in (5s, 15s]: above Rate, below 2 × Rate.
			movingBound: 2 * window.Rate,
		},
		{
			name:   "SlidingLog 100 per 10s",
			limits: []core.Limit{window.WithAlgorithm(core.SlidingLog)},
			phases: []phase{
				{at: 5 * sec, admitted: 100, remaining: []int64{0}},
				{at: 15*sec - us, admitted: 0, remaining: []int64{0}},
				{at: 15 * sec, admitted: 100, remaining: []int64{0}}, // the entries of 5s left
				{at: 26 * sec, admitted: 100, remaining: []int64{0}},
			},
		},
		{
			// Start, 00:00Z, is 19:00 EST: the New York day ends at 05:00Z.
			name:   "CalendarWindow 100 per New York day",
			limits: []core.Limit{core.PerCalendarDay(100, newYork)},
			phases: []phase{
				{at: 0, admitted: 100, remaining: []int64{0}},
				{at: 5*hour - us, admitted: 0, remaining: []int64{0}},
				{at: 5 * hour, admitted: 100, remaining: []int64{0}},
				{at: 29 * hour, admitted: 100, remaining: []int64{0}},
			},
		},
		{
			// GCRA T = 0.5s, B·T = 10s; the minute window is [0, 60s).
			name: "GCRA 20 per 10s and FixedWindow 50 per minute",
			limits: []core.Limit{
				{Rate: 20, Period: 10 * sec},
				core.PerMinute(50).WithAlgorithm(core.FixedWindow),
			},
			phases: []phase{
				{at: 0, admitted: 20, remaining: []int64{0, 30}},
				{at: 5 * sec, admitted: 10, remaining: []int64{0, 20}},
				{at: 20 * sec, admitted: 20, remaining: []int64{0, 0}},
				{at: 40 * sec, admitted: 0, remaining: []int64{20, 0}}, // the bucket is not charged
				{at: minute, admitted: 20, remaining: []int64{0, 30}},
			},
		},
		{
			// Token bucket T = 1s, B = 30; the log's window is 20s.
			name: "TokenBucket 1 per second, burst 30, and SlidingLog 25 per 20s",
			limits: []core.Limit{
				core.PerSecond(1).WithBurst(30).WithAlgorithm(core.TokenBucket),
				{Rate: 25, Period: 20 * sec, Algorithm: core.SlidingLog},
			},
			phases: []phase{
				{at: 0, admitted: 25, remaining: []int64{5, 0}},
				{at: 10 * sec, admitted: 0, remaining: []int64{15, 0}},
				{at: 20 * sec, admitted: 25, remaining: []int64{0, 0}}, // the log's entries of 0s left
				{at: 25 * sec, admitted: 0, remaining: []int64{5, 0}},
				{at: 40 * sec, admitted: 20, remaining: []int64{0, 5}},
			},
		},
	}
}
