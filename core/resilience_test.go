package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manualClock is a clock tests move by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var errDown = fmt.Errorf("dial tcp: connection refused: %w", ErrStoreUnavailable)

func TestBreakerOpensAfterConsecutiveFailuresAndProbes(t *testing.T) {
	clock := newManualClock()
	var changes []string
	b := &breaker{cfg: BreakerConfig{Failures: 3, OpenFor: time.Second}, now: clock.Now,
		onChange: func(from, to BreakerState) { changes = append(changes, from.String()+">"+to.String()) }}

	for range 2 {
		require.True(t, b.allow())
		b.done(true, false)
	}
	require.True(t, b.allow())
	b.done(false, false)
	assert.Equal(t, BreakerClosed, b.current(), "a success resets the count")

	for range 3 {
		require.True(t, b.allow())
		b.done(true, false)
	}
	assert.Equal(t, BreakerOpen, b.current())
	assert.False(t, b.allow(), "open: no call")

	clock.Advance(time.Second)
	assert.True(t, b.allow(), "cool-down over: one probe")
	assert.Equal(t, BreakerHalfOpen, b.current())
	assert.False(t, b.allow(), "only one probe at a time")
	b.done(true, false)
	assert.Equal(t, BreakerOpen, b.current(), "a failed probe reopens")

	clock.Advance(time.Second)
	require.True(t, b.allow())
	b.done(false, true)
	assert.Equal(t, BreakerHalfOpen, b.current(), "an abandoned probe decides nothing")
	require.True(t, b.allow(), "and frees the probe slot")
	b.done(false, false)
	assert.Equal(t, BreakerClosed, b.current())

	assert.Equal(t, []string{"closed>open", "open>half_open", "half_open>open", "open>half_open", "half_open>closed"}, changes)
}

func TestBreakerConfigValidation(t *testing.T) {
	_, err := NewLimiter(&recordingStore{}, WithLimits(PerSecond(1)), WithBreaker(BreakerConfig{Failures: -1}))
	assert.ErrorContains(t, err, "Failures")
	_, err = NewLimiter(&recordingStore{}, WithLimits(PerSecond(1)), WithBreaker(BreakerConfig{OpenFor: -1}))
	assert.ErrorContains(t, err, "OpenFor")
}

func TestLimiterBreakerSkipsTheStoreWhileOpen(t *testing.T) {
	clock := newManualClock()
	store := &recordingStore{err: errDown}
	store.now = clock.Now // the limiter follows its store's clock
	l := MustNewLimiter(store, WithLimits(PerSecond(1)),
		WithBreaker(BreakerConfig{Failures: 2, OpenFor: time.Second}))
	ctx := context.Background()

	for range 5 {
		res, err := l.Allow(ctx, "a")
		require.NoError(t, err)
		assert.True(t, res.Degraded)
		assert.True(t, res.Allowed, "fail open")
	}
	assert.Len(t, store.calls, 2, "the breaker opened after two failures")
	res, _ := l.Allow(ctx, "a")
	assert.ErrorIs(t, res.Err, ErrBreakerOpen)
	assert.Equal(t, BreakerOpen, l.BreakerState())

	store.err = nil
	clock.Advance(time.Second)
	res, err := l.Allow(ctx, "a")
	require.NoError(t, err)
	assert.False(t, res.Degraded, "the probe reached the recovered store")
	assert.Equal(t, BreakerClosed, l.BreakerState())
}

func TestLimiterSurfacesStoreBugs(t *testing.T) {
	store := &recordingStore{err: errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")}
	l := MustNewLimiter(store, WithLimits(PerSecond(1)), WithBreaker(BreakerConfig{Failures: 1}))

	_, err := l.Allow(context.Background(), "a")

	assert.ErrorContains(t, err, "WRONGTYPE")
	assert.Equal(t, BreakerClosed, l.BreakerState(), "a bug is not an outage")
}

// slowStore blocks until its context is done.
type slowStore struct{}

func (slowStore) Take(ctx context.Context, dst []Decision, _ []string, _ []Limit, _ int64) ([]Decision, error) {
	<-ctx.Done()
	return dst, ctx.Err()
}

func TestLimiterTimeoutDegrades(t *testing.T) {
	l := MustNewLimiter(slowStore{}, WithLimits(PerSecond(1)), WithTimeout(time.Millisecond), WithFailureMode(FailClosed))

	res, err := l.Allow(context.Background(), "a")

	require.NoError(t, err)
	assert.True(t, res.Degraded)
	assert.False(t, res.Allowed, "fail closed")
	assert.ErrorIs(t, res.Err, ErrStoreUnavailable)
	assert.ErrorIs(t, res.Err, context.DeadlineExceeded)
	assert.Equal(t, time.Second, res.Binding().RetryAfter)
}

func TestLimiterFailLocalUsesTheFallbackWithSharedLimits(t *testing.T) {
	primary := &recordingStore{err: errDown}
	local := &recordingStore{}
	l := MustNewLimiter(primary, WithLimits(PerSecond(10).WithBurst(100), PerMinute(7).WithName("m").WithAlgorithm(FixedWindow)),
		WithFallback(local, 3))

	res, err := l.Allow(context.Background(), "a")

	require.NoError(t, err)
	assert.True(t, res.Degraded)
	call := local.lastCall(t)
	require.Len(t, call.limits, 2)
	assert.Equal(t, int64(4), call.limits[0].Rate, "ceil(10/3)")
	assert.Equal(t, int64(34), call.limits[0].Burst, "ceil(100/3)")
	assert.Equal(t, int64(3), call.limits[1].Rate, "ceil(7/3)")
	assert.Equal(t, int64(0), call.limits[1].Burst)
	assert.Equal(t, primary.lastCall(t).keys, call.keys)
}

func TestLimiterDenyCacheAnswersWithoutTheStore(t *testing.T) {
	clock := newManualClock()
	store := &recordingStore{deny: map[string]bool{"s": true}}
	store.now = clock.Now // the limiter follows its store's clock
	l := MustNewLimiter(store, WithLimits(PerSecond(10).WithName("s")), WithDenyCache(100))
	ctx := context.Background()

	first, err := l.AllowN(ctx, "a", 2)
	require.NoError(t, err)
	require.False(t, first.Allowed)
	require.Equal(t, 100*time.Millisecond, first.Binding().RetryAfter)

	clock.Advance(40 * time.Millisecond)
	cached, err := l.AllowN(ctx, "a", 2)
	require.NoError(t, err)
	assert.False(t, cached.Allowed)
	assert.Equal(t, 60*time.Millisecond, cached.Binding().RetryAfter, "aged by the time passed")
	assert.Len(t, store.calls, 1, "served from the deny cache")

	_, _ = l.AllowN(ctx, "a", 1)
	assert.Len(t, store.calls, 2, "a cheaper request may pass sooner: asks the store")
	_, _ = l.AllowN(ctx, "b", 2)
	assert.Len(t, store.calls, 3, "another client")
	_, _ = l.Take(ctx, Request{Identity: "a", Cost: 0})
	assert.Len(t, store.calls, 4, "a peek always asks the store")

	clock.Advance(60 * time.Millisecond)
	_, _ = l.AllowN(ctx, "a", 2)
	assert.Len(t, store.calls, 4, "the cost-1 denial at 40 ms holds until 140 ms, and covers cost 2")

	clock.Advance(40 * time.Millisecond)
	_, _ = l.AllowN(ctx, "a", 2)
	assert.Len(t, store.calls, 5, "RetryAfter passed")
}

func TestDenyCacheIsBounded(t *testing.T) {
	c := newDenyCache(50)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	res := NewResult(Decision{Reason: Exhausted, RetryAfter: time.Hour})
	for i := range 1000 {
		c.put(fmt.Sprint(i), &plan{name: "free"}, [32]byte{}, 1, &res, now)
	}
	assert.Len(t, c.entries, 50)
}

type recordingObserver struct {
	mu       sync.Mutex
	results  []Result
	breakers []BreakerState
}

func (o *recordingObserver) Decided(_ context.Context, _ Request, res Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.results = append(o.results, res)
}

func (o *recordingObserver) BreakerChanged(_, to BreakerState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.breakers = append(o.breakers, to)
}

func TestLimiterShadowModeAdmitsButObserves(t *testing.T) {
	obs := &recordingObserver{}
	store := &recordingStore{deny: map[string]bool{"s": true}}
	l := MustNewLimiter(store, WithLimits(PerSecond(1).WithName("s")), WithShadow(), WithObserver(obs))

	res, err := l.Allow(context.Background(), "a")

	require.NoError(t, err)
	assert.True(t, res.Allowed)
	assert.True(t, res.Shadowed)
	assert.False(t, res.Binding().Allowed, "the decision still says deny")
	require.Len(t, obs.results, 1)
	assert.True(t, obs.results[0].Shadowed)
}

func TestObserverHearsBreakerChanges(t *testing.T) {
	obs := &recordingObserver{}
	l := MustNewLimiter(&recordingStore{err: errDown}, WithLimits(PerSecond(1)), WithObserver(obs),
		WithBreaker(BreakerConfig{Failures: 1, OpenFor: time.Hour}))

	_, _ = l.Allow(context.Background(), "a")

	assert.Equal(t, []BreakerState{BreakerOpen}, obs.breakers)
}

func TestFailLocalNeedsAFallback(t *testing.T) {
	_, err := NewLimiter(&recordingStore{}, WithLimits(PerSecond(1)), WithFailureMode(FailLocal))
	assert.ErrorContains(t, err, "WithFallback")
	_, err = NewLimiter(&recordingStore{}, WithLimits(PerSecond(1)), WithFallback(&recordingStore{}, 0))
	assert.ErrorContains(t, err, "nodes")
}

func TestDenyCacheLetsOneProbeThroughWhenADenialRunsOut(t *testing.T) {
	clock := newManualClock()
	store := &recordingStore{deny: map[string]bool{"s": true}}
	store.now = clock.Now // the limiter follows its store's clock
	l := MustNewLimiter(store, WithLimits(PerSecond(10).WithName("s")), WithDenyCache(100))
	ctx := context.Background()
	_, err := l.Allow(ctx, "a")
	require.NoError(t, err)
	require.Len(t, store.calls, 1)

	clock.Advance(100 * time.Millisecond) // the cached denial runs out
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			res, err := l.Allow(ctx, "a")
			assert.NoError(t, err)
			assert.False(t, res.Allowed)
		})
	}
	wg.Wait()

	assert.Len(t, store.calls, 2, "one probe for 50 concurrent requests; the rest wait for its denial")
}

// deadlineStore records whether its context had a deadline.
type deadlineStore struct {
	recordingStore
	hadDeadline bool
}

func (s *deadlineStore) Take(ctx context.Context, dst []Decision, keys []string, limits []Limit, cost int64) ([]Decision, error) {
	_, s.hadDeadline = ctx.Deadline()
	return s.recordingStore.Take(ctx, dst, keys, limits, cost)
}

type nonBlockingStore struct{ deadlineStore }

func (s *nonBlockingStore) Capabilities() Capabilities {
	c := s.recordingStore.Capabilities()
	c.NonBlocking = true
	return c
}

func TestLimiterGivesOnlyBlockingStoresADeadline(t *testing.T) {
	remote := &deadlineStore{}
	_, err := MustNewLimiter(remote, WithLimits(PerSecond(1))).Allow(context.Background(), "a")
	require.NoError(t, err)
	assert.True(t, remote.hadDeadline, "a store that may wait on I/O gets the limiter's timeout")

	local := &nonBlockingStore{}
	_, err = MustNewLimiter(local, WithLimits(PerSecond(1))).Allow(context.Background(), "a")
	require.NoError(t, err)
	assert.False(t, local.hadDeadline, "a NonBlocking store needs no timer")
}

func TestDenyCacheIsOnByDefault(t *testing.T) {
	tests := []struct {
		name       string
		opts       []Option
		storeCalls int
	}{
		{"default", nil, 1},
		{"WithDenyCache(0)", []Option{WithDenyCache(0)}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &recordingStore{deny: map[string]bool{"s": true}}
			l := MustNewLimiter(store, append([]Option{WithLimits(PerSecond(1).WithName("s"))}, tt.opts...)...)
			for range 3 {
				res, err := l.Allow(context.Background(), "a")
				require.NoError(t, err)
				require.False(t, res.Allowed)
			}
			assert.Len(t, store.calls, tt.storeCalls)
		})
	}
	_, err := NewLimiter(&recordingStore{}, WithLimits(PerSecond(1)), WithDenyCache(-1))
	assert.ErrorContains(t, err, "deny cache size")
}

func TestBreakerIsOnByDefaultForStoresThatMayBlock(t *testing.T) {
	tests := []struct {
		name       string
		store      func() *recordingStore
		opts       []Option
		storeCalls int
	}{
		{"blocking store, default", func() *recordingStore { return &recordingStore{err: errDown} }, nil, 5},
		{"blocking store, WithoutBreaker", func() *recordingStore { return &recordingStore{err: errDown} }, []Option{WithoutBreaker()}, 20},
		{"blocking store, WithBreaker(Failures 2)", func() *recordingStore { return &recordingStore{err: errDown} },
			[]Option{WithBreaker(BreakerConfig{Failures: 2})}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := tt.store()
			store.now = newManualClock().Now
			l := MustNewLimiter(store, append([]Option{WithLimits(PerSecond(1))}, tt.opts...)...)
			for range 20 {
				res, err := l.Allow(context.Background(), "a")
				require.NoError(t, err)
				require.True(t, res.Degraded)
			}
			assert.Len(t, store.calls, tt.storeCalls)
		})
	}

	local := MustNewLimiter(&nonBlockingStore{}, WithLimits(PerSecond(1)))
	assert.Nil(t, local.breakers, "a store that never blocks needs no breaker")

	for _, opts := range [][]Option{
		{WithBreaker(BreakerConfig{}), WithoutBreaker()},
		{WithoutBreaker(), WithBreaker(BreakerConfig{})},
	} {
		_, err := NewLimiter(&recordingStore{}, append([]Option{WithLimits(PerSecond(1))}, opts...)...)
		assert.ErrorContains(t, err, "WithBreaker and WithoutBreaker contradict each other")
	}
}
