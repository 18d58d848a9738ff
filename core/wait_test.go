package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// waitClock is the fake time of the wait tests: the store's, the
// limiter's and the sleeps' clock.
type waitClock struct {
	mu sync.Mutex
	t  time.Time
}

func newWaitClock() *waitClock { return &waitClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *waitClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *waitClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// sleeper is a fake timer: a sleep of d moves the clock d on and fires at
// once, so a wait takes no wall time. It records every sleep; block makes
// a sleep call it and never fire instead (a wait cut short by ctx).
type sleeper struct {
	clock *waitClock
	block func()

	mu      sync.Mutex
	slept   []time.Duration
	stopped int
}

func (s *sleeper) timer(d time.Duration) (<-chan time.Time, func() bool) {
	s.mu.Lock()
	s.slept = append(s.slept, d)
	block := s.block
	s.mu.Unlock()
	stop := func() bool {
		s.mu.Lock()
		s.stopped++
		s.mu.Unlock()
		return block != nil
	}
	if block != nil {
		block()
		return nil, stop // never fires
	}
	s.clock.Advance(d)
	fire := make(chan time.Time, 1)
	fire <- s.clock.Now()
	return fire, stop
}

func (s *sleeper) sleeps() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.slept...)
}

func noJitter(time.Duration) time.Duration     { return 0 }
func fullJitter(d time.Duration) time.Duration { return d }

// newWaitLimiter returns a limiter over a memstore, both on clock, whose
// waits sleep on a fake timer without jitter.
func newWaitLimiter(t *testing.T, clock *waitClock, opts ...core.Option) (*core.Limiter, *sleeper) {
	t.Helper()
	store, err := memstore.New(memstore.WithClock(clock.Now))
	require.NoError(t, err)
	return newWaitLimiterOn(t, store, clock, opts...)
}

func newWaitLimiterOn(t *testing.T, store core.Store, clock *waitClock, opts ...core.Option) (*core.Limiter, *sleeper) {
	t.Helper()
	quiet := core.WithObserver(core.NewSlogObserver(slog.New(slog.DiscardHandler))) // failing stores are the point
	if _, ok := store.(core.Capable); !ok {                                         // a failing store: the limiter's clock comes from the store
		store = clockedStore{store, clock.Now}
	}
	l, err := core.NewLimiter(store, append([]core.Option{quiet}, opts...)...)
	require.NoError(t, err)
	s := &sleeper{clock: clock}
	core.SetWaitSeams(l, s.timer, noJitter)
	return l, s
}

// clockedStore gives a store without a clock of its own the test's clock,
// which the limiter follows (core.Capabilities).
type clockedStore struct {
	core.Store
	now func() time.Time
}

func (s clockedStore) Capabilities() core.Capabilities { return core.Capabilities{Clock: s.now} }

// deadlineCtx has a deadline on the fake clock; it is never done by itself.
type deadlineCtx struct {
	context.Context
	at time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

func withFakeDeadline(clock *waitClock, in time.Duration) context.Context {
	return deadlineCtx{Context: context.Background(), at: clock.Now().Add(in)}
}

// exhaust takes id's quota until a denial, and returns its RetryAfter.
func exhaust(t *testing.T, l *core.Limiter, id string) time.Duration {
	t.Helper()
	for range 1000 {
		res, err := l.Allow(context.Background(), id)
		require.NoError(t, err)
		if !res.Allowed {
			return res.Binding().RetryAfter
		}
	}
	t.Fatal("the limit never denied")
	return 0
}

func TestWaitAdmitsAfterExactlyRetryAfter(t *testing.T) {
	tests := []struct {
		name  string
		limit core.Limit
	}{
		{"gcra 10/s burst 1", core.PerSecond(10).WithBurst(1)},
		{"gcra 10/s burst 3", core.PerSecond(10).WithBurst(3)},
		{"token bucket 10/s burst 2", core.PerSecond(10).WithBurst(2).WithAlgorithm(core.TokenBucket)},
		{"fixed window 2/s", core.PerSecond(2).WithAlgorithm(core.FixedWindow)},
		{"sliding window 4/s", core.PerSecond(4).WithAlgorithm(core.SlidingWindow)},
		{"sliding log 3/s", core.PerSecond(3).WithAlgorithm(core.SlidingLog)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newWaitClock()
			l, s := newWaitLimiter(t, clock, core.WithLimits(tt.limit))
			clock.Advance(250 * time.Millisecond) // off any window boundary
			retry := exhaust(t, l, "job")
			require.Positive(t, retry)
			start := clock.Now()

			res, err := l.Wait(context.Background(), "job")

			require.NoError(t, err)
			assert.True(t, res.Allowed)
			assert.False(t, res.Degraded)
			assert.Equal(t, []time.Duration{retry}, s.sleeps(), "one sleep of exactly RetryAfter, then admitted")
			assert.Equal(t, retry, clock.Now().Sub(start))
		})
	}
}

// Back-to-back waits of one worker on a 10/s burst-1 limit are admitted
// one emission interval apart.
func TestWaitPacesAWorkerAtTheRate(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerSecond(10).WithBurst(1)))
	start := clock.Now()
	for range 5 {
		res, err := l.Wait(context.Background(), "job")
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}, s.sleeps())
	assert.Equal(t, 400*time.Millisecond, clock.Now().Sub(start))
}

func TestWaitCostThatNeverFitsErrsAtOnce(t *testing.T) {
	tests := []struct {
		name   string
		limits []core.Limit
		cost   int64
		want   string
	}{
		{"one limit", []core.Limit{core.PerSecond(10).WithBurst(3).WithName("s")}, 4, `cost 4, limit "s" holds 3`},
		{"the smaller of two", []core.Limit{core.PerSecond(10).WithName("s"), core.PerMinute(3).WithName("m")}, 5, `cost 5, limit "m" holds 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newWaitClock()
			l, s := newWaitLimiter(t, clock, core.WithLimits(tt.limits...))

			res, err := l.WaitN(context.Background(), "job", tt.cost)

			require.ErrorIs(t, err, core.ErrCostTooHigh)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, s.sleeps(), "no sleep")
			assert.False(t, res.Allowed)
			assert.Equal(t, core.CostTooHigh, res.Binding().Reason)
		})
	}
}

// A concurrency limit takes one lease whatever the cost: a cost above its
// n fits, and the wait admits at once, holding the lease; the rate limit
// beside it is still charged the cost.
func TestWaitCostAboveAConcurrencyLimitFits(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerMinute(100), core.Concurrent(2)))

	res, err := l.WaitN(context.Background(), "job", 5)

	require.NoError(t, err)
	assert.True(t, res.Allowed)
	assert.NotNil(t, res.Lease, "the admitted wait holds its lease")
	assert.Empty(t, s.sleeps(), "no sleep")
	assert.Equal(t, int64(95), res.Decision(0).Remaining)
	assert.Equal(t, int64(1), res.Decision(1).InFlight())
	require.NoError(t, l.Release(context.Background(), res))
}

// While the store fails the capacity is still known: a cost that never
// fits errs at once, failing open or local (the fallback's share).
func TestWaitCostThatNeverFitsErrsWhileTheStoreFails(t *testing.T) {
	clock := newWaitClock()
	limit := core.PerSecond(10).WithBurst(4).WithName("s")
	l, _ := newWaitLimiterOn(t, downStore{}, clock, core.WithLimits(limit))
	_, err := l.WaitN(context.Background(), "job", 5)
	require.ErrorIs(t, err, core.ErrCostTooHigh, "fail open")

	fallback, err := memstore.New(memstore.WithClock(clock.Now))
	require.NoError(t, err)
	l, s := newWaitLimiterOn(t, downStore{}, clock, core.WithLimits(limit), core.WithFallback(fallback, 2))
	_, err = l.WaitN(context.Background(), "job", 3) // fits 4, not the share of 2
	require.ErrorIs(t, err, core.ErrCostTooHigh, "fail local")
	assert.Contains(t, err.Error(), `limit "s" holds 2`)
	assert.Empty(t, s.sleeps())
}

func TestWaitDeadlineBeforeAdmissionErrsAtOnce(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerSecond(10).WithBurst(1)))
	require.Equal(t, 100*time.Millisecond, exhaust(t, l, "job"))

	res, err := l.Wait(withFakeDeadline(clock, 99*time.Millisecond), "job")

	require.ErrorIs(t, err, core.ErrWaitExceedsDeadline)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "code that checks for deadlines sees one")
	assert.Contains(t, err.Error(), "admission in 100ms")
	assert.Empty(t, s.sleeps(), "no sleep into the deadline")
	assert.False(t, res.Allowed)
	assert.Equal(t, 100*time.Millisecond, res.Binding().RetryAfter)

	res, err = l.Wait(withFakeDeadline(clock, 100*time.Millisecond), "job")
	require.NoError(t, err, "a deadline at the admission is enough")
	assert.True(t, res.Allowed)
	assert.Equal(t, []time.Duration{100 * time.Millisecond}, s.sleeps())
}

// The jitter never pushes a wake-up past the deadline: it takes at most
// half the slack between admission and deadline.
func TestWaitJitterStaysBeforeTheDeadline(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerSecond(10).WithBurst(1)))
	core.SetWaitSeams(l, s.timer, fullJitter)

	exhaust(t, l, "a")
	_, err := l.Wait(context.Background(), "a")
	require.NoError(t, err)
	exhaust(t, l, "b")
	_, err = l.Wait(withFakeDeadline(clock, 104*time.Millisecond), "b")
	require.NoError(t, err)

	assert.Equal(t, []time.Duration{110 * time.Millisecond, 102 * time.Millisecond}, s.sleeps(),
		"100 ms + the largest jitter (10 ms); then + half the 4 ms slack")
}

func TestWaitCancelledMidWaitReturnsCtxError(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerSecond(10).WithBurst(1)))
	exhaust(t, l, "job")
	ctx, cancel := context.WithCancel(context.Background())
	s.block = cancel // the caller gives up while the wait sleeps

	res, err := l.Wait(ctx, "job")

	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, res.Allowed)
	assert.Equal(t, []time.Duration{100 * time.Millisecond}, s.sleeps())
	assert.Equal(t, 1, s.stopped, "the timer is stopped")
}

func TestWaitWithADoneCtxReturnsCtxError(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerSecond(10)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := l.Wait(ctx, "job")
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, s.sleeps())
}

func TestWaitJitterIsBounded(t *testing.T) {
	l, err := core.NewLimiter(&recordingCountStore{}, core.WithLimits(core.PerSecond(1)))
	require.NoError(t, err)
	tests := []struct {
		wait, max time.Duration
	}{
		{0, 0},
		{time.Microsecond, 100 * time.Nanosecond},
		{100 * time.Millisecond, 10 * time.Millisecond},
		{10 * time.Second, time.Second},
		{time.Hour, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.wait.String(), func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 2000 {
				j := core.WaitJitter(l, tt.wait)
				require.GreaterOrEqual(t, j, time.Duration(0))
				require.LessOrEqual(t, j, tt.max)
				seen[j] = true
			}
			if tt.max > 0 {
				assert.Greater(t, len(seen), 10, "the jitter is random, not a constant")
			}
		})
	}
}

// A long wait gets at most 1 s of jitter.
func TestWaitJitterOfALongWaitIsCapped(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerHour(1)))
	core.SetWaitSeams(l, s.timer, fullJitter)
	exhaust(t, l, "job")
	_, err := l.Wait(context.Background(), "job")
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{time.Hour + time.Second}, s.sleeps())
}

// downStore is a store that cannot be reached.
type downStore struct{}

func (downStore) Take(_ context.Context, dst []core.Decision, _ []string, _ []core.Limit, _ int64) ([]core.Decision, error) {
	return dst, fmt.Errorf("%w: connection refused", core.ErrStoreUnavailable)
}

func TestWaitFollowsTheFailureMode(t *testing.T) {
	limit := core.PerSecond(10).WithBurst(1).WithName("s")
	t.Run("fail open admits at once", func(t *testing.T) {
		clock := newWaitClock()
		l, s := newWaitLimiterOn(t, downStore{}, clock, core.WithLimits(limit))
		for range 3 {
			res, err := l.Wait(context.Background(), "job")
			require.NoError(t, err)
			assert.True(t, res.Allowed)
			assert.True(t, res.Degraded)
		}
		assert.Empty(t, s.sleeps())
	})
	t.Run("fail closed errs at once", func(t *testing.T) {
		clock := newWaitClock()
		l, s := newWaitLimiterOn(t, downStore{}, clock, core.WithLimits(limit), core.WithFailureMode(core.FailClosed))
		for range 7 { // past the breaker's threshold: open breaker, same answer
			res, err := l.Wait(context.Background(), "job")
			require.ErrorIs(t, err, core.ErrStoreUnavailable)
			assert.False(t, res.Allowed)
			assert.Equal(t, core.Unavailable, res.Binding().Reason)
		}
		assert.Empty(t, s.sleeps(), "an error, not an endless wait")
	})
	t.Run("fail local waits for the fallback", func(t *testing.T) {
		clock := newWaitClock()
		fallback, err := memstore.New(memstore.WithClock(clock.Now))
		require.NoError(t, err)
		l, s := newWaitLimiterOn(t, downStore{}, clock, core.WithLimits(limit), core.WithFallback(fallback, 1))
		for range 3 {
			res, err := l.Wait(context.Background(), "job")
			require.NoError(t, err)
			assert.True(t, res.Allowed)
			assert.True(t, res.Fallback)
		}
		assert.Equal(t, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond}, s.sleeps(),
			"the fallback's 10/s paces the waits")
	})
}

// The binding limit of a multi-limit tier sets each wait: first the
// per-second limit's, then the per-minute limit's longer one.
func TestWaitSleepsTheBindingLimitOfTheTier(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock,
		core.WithTier("free", core.PerSecond(1).WithName("s")),
		core.WithTier("pro", core.PerSecond(10).WithBurst(1).WithName("s"), core.PerMinute(60).WithBurst(2).WithName("m")))
	start := clock.Now()
	var at []time.Duration
	for range 3 {
		res, err := l.WaitTake(context.Background(), core.Request{Identity: "job", Tier: "pro", Cost: 1})
		require.NoError(t, err)
		require.True(t, res.Allowed)
		assert.Equal(t, "pro", res.Tier)
		at = append(at, clock.Now().Sub(start))
	}
	assert.Equal(t, []time.Duration{0, 100 * time.Millisecond, time.Second}, at)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 900 * time.Millisecond}, s.sleeps())
}

func TestWaitInShadowModeAdmitsAtOnce(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerSecond(10).WithBurst(1)), core.WithShadow())
	for _, cost := range []int64{1, 1, 5} { // a denial, then a cost that never fits
		res, err := l.WaitN(context.Background(), "job", cost)
		require.NoError(t, err)
		assert.True(t, res.Allowed)
	}
	res, err := l.Wait(context.Background(), "job")
	require.NoError(t, err)
	assert.True(t, res.Shadowed, "the limits denied it")
	assert.Empty(t, s.sleeps(), "shadow never blocks")
}

func TestWaitOfNoCostOrNegativeCost(t *testing.T) {
	clock := newWaitClock()
	l, s := newWaitLimiter(t, clock, core.WithLimits(core.PerSecond(10).WithBurst(1)))
	exhaust(t, l, "job")
	res, err := l.WaitN(context.Background(), "job", 0)
	require.NoError(t, err, "a peek charges nothing and never waits")
	assert.True(t, res.Allowed)
	_, err = l.WaitN(context.Background(), "job", -1)
	require.ErrorIs(t, err, core.ErrInvalidCost)
	assert.Empty(t, s.sleeps())
}

// recordingCountStore denies every take as exhausted with no RetryAfter (a
// store that reports none) and counts the takes.
type recordingCountStore struct{ takes atomic.Int64 }

func (s *recordingCountStore) Take(_ context.Context, dst []core.Decision, _ []string, limits []core.Limit, _ int64) ([]core.Decision, error) {
	s.takes.Add(1)
	for _, l := range limits {
		dst = append(dst, core.Decision{Limit: l, Reason: core.Exhausted})
	}
	return dst, nil
}

// A denial without a RetryAfter waits one emission interval: never a poll.
func TestWaitNeverPollsOnAZeroRetryAfter(t *testing.T) {
	clock := newWaitClock()
	store := &recordingCountStore{}
	l, s := newWaitLimiterOn(t, store, clock, core.WithLimits(core.PerSecond(10)))
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	timer := s.timer
	core.SetWaitSeams(l, func(d time.Duration) (<-chan time.Time, func() bool) {
		if n++; n == 3 {
			s.block = cancel
		}
		return timer(d)
	}, noJitter)

	_, err := l.Wait(ctx, "job")

	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}, s.sleeps())
	assert.Equal(t, int64(3), store.takes.Load(), "one take per sleep")
}

// serverTime returns the Redis server's TIME in µs since the Unix epoch.
func serverTime(t *testing.T, srv *redistest.Server) int64 {
	t.Helper()
	now, err := srv.Client(t).Time(context.Background()).Result()
	require.NoError(t, err)
	return now.UnixMicro()
}

// tryCounter counts decisions: every try of a waiter.
type tryCounter struct{ n atomic.Int64 }

func (o *tryCounter) Decided(context.Context, core.Request, core.Result)  { o.n.Add(1) }
func (o *tryCounter) BreakerChanged(core.BreakerState, core.BreakerState) {}

// admissionTimes returns the times (µs since the Unix epoch) of the runs
// of a sliding log key, each of which must hold one request unit.
func admissionTimes(t *testing.T, srv *redistest.Server, key string) []int64 {
	t.Helper()
	runs, err := srv.Client(t).ZRangeWithScores(context.Background(), key, 0, -1).Result()
	require.NoError(t, err)
	epoch := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var at []int64
	for _, r := range runs {
		member, _ := r.Member.(string)
		require.Regexp(t, `^r\d+:1$`, member, "one unit per run: each take costs 1, none share a µs")
		at = append(at, int64(r.Score)+epoch)
	}
	return at
}

// TestWaitAdmitsAtTheLimitRateOnRedis: 8 waiters over 2 clients, on 2 app
// nodes (each client has 2 waiters on each node), on a GCRA limit of 20/s
// burst 1, are admitted at the limit's rate, never faster, by Redis's own
// accounting: beside the GCRA limit the tier holds an "audit" sliding log
// of 3,600 per hour (it never binds), which stores the Redis time of
// every admission of the client (a denial charges neither limit).
//
// The bounds, with T = 50 ms and the Redis TIME read before the first and
// after the last wait (start, end; every script's TIME lies between them):
//   - Redis admitted exactly what the waiters saw: one run per admission,
//     all between start and end.
//   - never faster: consecutive admissions of a client are at least T
//     apart (GCRA with burst 1: the next admission is at tat = previous +
//     T at the earliest; the script's times are whole µs), hence also
//     n <= 1 + floor((end-start)/T). Exact, no tolerance: every time is
//     read from the one clock the script reads.
//   - not much slower: the waiters reach at least half the rate, n >=
//     (1 + (end-start)/T) / 2. A loaded machine admits fewer than the
//     rate allows, never more; half leaves room for a stalled second of a
//     2-second run (the jitter alone costs at most 10% of T per admission).
func TestWaitAdmitsAtTheLimitRateOnRedis(t *testing.T) {
	srv := redistest.Dedicated(t) // its own server: the script calls are the waiters'
	prefix := redistest.Prefix(t)
	limit := core.PerSecond(20).WithBurst(1).WithName("jobs")
	audit := core.PerHour(3600).WithAlgorithm(core.SlidingLog).WithName("audit")
	var limiters []*core.Limiter
	tries := &tryCounter{}
	for _, c := range srv.Clients(t, 2) {
		store, err := redisstore.New(c)
		require.NoError(t, err)
		l, err := core.NewLimiter(store, core.WithLimits(limit, audit), core.WithPrefix(prefix),
			core.WithFailureMode(core.FailClosed), core.WithTimeout(5*time.Second), core.WithObserver(tries))
		require.NoError(t, err)
		limiters = append(limiters, l)
	}
	ids := []string{"worker-a", "worker-b"}
	const waiters, each = 8, 10
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	admitted := make([]atomic.Int64, len(ids))
	calls := scriptCalls(t, srv.Client(t))
	start := serverTime(t, srv)
	var wg sync.WaitGroup
	for i := range waiters {
		client, l := i%len(ids), limiters[(i/len(ids))%len(limiters)]
		wg.Go(func() {
			for range each {
				res, err := l.Wait(ctx, ids[client])
				if !assert.NoError(t, err) || !assert.False(t, res.Degraded) {
					return
				}
				admitted[client].Add(1)
			}
		})
	}
	wg.Wait()
	end := serverTime(t, srv)
	calls = scriptCalls(t, srv.Client(t)) - calls
	interval := limit.Interval().Microseconds()
	t.Logf("%d tries (%d script calls) for %d admissions", tries.n.Load(), calls, waiters*each)
	// No polling: a denied waiter sleeps until the next emission at least,
	// so it is denied about once per interval T; twice that, per waiter,
	// over the intervals the run spans, bounds the denied tries (most of
	// which the deny cache answers: it cannot hide a poll from this count).
	assert.LessOrEqual(t, tries.n.Load(), waiters*each+2*waiters*(2+(end-start)/interval))

	allowed := 1 + (end-start)/interval
	keys, err := core.NewKeyBuilder(prefix)
	require.NoError(t, err)
	for c, id := range ids {
		n := admitted[c].Load()
		require.Equal(t, int64(waiters/len(ids)*each), n)
		at := admissionTimes(t, srv, keys.Key(id, audit))
		require.Len(t, at, int(n), "Redis admitted what the waiters saw")
		assert.GreaterOrEqual(t, at[0], start)
		assert.LessOrEqual(t, at[len(at)-1], end)
		closest := end - start
		for k := 1; k < len(at); k++ {
			closest = min(closest, at[k]-at[k-1])
		}
		t.Logf("%s: %d admitted in %.3f s (the limit allows %d), at least %d µs apart", id, n, float64(end-start)/1e6, allowed, closest)
		assert.GreaterOrEqual(t, closest, interval, "never faster than the rate")
		assert.LessOrEqual(t, n, allowed, "never more than the rate")
		assert.GreaterOrEqual(t, 2*n, allowed, "at least half the rate")
	}
	assert.False(t, errors.Is(ctx.Err(), context.DeadlineExceeded), "the run ended before its safety deadline")
}
