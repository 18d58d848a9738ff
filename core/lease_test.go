package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// leaseClock is a manual clock shared by a limiter and its memory store.
type leaseClock struct {
	mu sync.Mutex
	t  time.Time
}

func newLeaseClock() *leaseClock {
	return &leaseClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *leaseClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *leaseClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func leaseStore(t *testing.T, clock *leaseClock) *memstore.Store {
	t.Helper()
	s, err := memstore.New(memstore.WithClock(clock.Now))
	require.NoError(t, err)
	return s
}

// inFlight returns the in-flight count the concurrency limit of res saw.
func inFlight(t *testing.T, res core.Result) int64 {
	t.Helper()
	for _, d := range res.Decisions() {
		if d.Limit.Algorithm == core.Concurrency {
			return d.InFlight()
		}
	}
	t.Fatal("no Concurrency decision")
	return 0
}

func TestConcurrentLimit(t *testing.T) {
	l := core.Concurrent(2)
	assert.Equal(t, core.Limit{Rate: 2, Period: 30 * time.Second, Algorithm: core.Concurrency}, l)
	assert.Equal(t, "2-in-flight", l.EffectiveName())
	assert.Equal(t, "2-in-flight", l.WithLeaseTTL(time.Minute).EffectiveName(), "the TTL is not part of the name")
	assert.Equal(t, "concurrency", core.Concurrency.String())
	assert.Equal(t, "i", core.Concurrency.Tag())
	assert.NoError(t, l.Validate())
	assert.NoError(t, core.Concurrent(10_000).WithLeaseTTL(time.Millisecond).Validate())
	assert.NoError(t, core.Concurrent(3).WithBurst(3).WithLeaseTTL(24*time.Hour).Validate())

	tests := []struct {
		name  string
		limit core.Limit
		want  string
	}{
		{"no requests in flight", core.Concurrent(0), `limit "0-in-flight": Rate (requests in flight) must be at least 1, got 0`},
		{"too many in flight", core.Concurrent(10_001), "Rate (requests in flight) must be at most 10000"},
		{"zero TTL", core.Concurrent(2).WithLeaseTTL(0), "Period (lease TTL) must be at least 1ms, got 0s"},
		{"sub-millisecond TTL", core.Concurrent(2).WithLeaseTTL(500 * time.Microsecond), "Period (lease TTL) must be at least 1ms"},
		{"TTL over a day", core.Concurrent(2).WithLeaseTTL(25 * time.Hour), "Period (lease TTL) must be at most 24h0m0s, got 25h0m0s"},
		{"a burst", core.Concurrent(2).WithBurst(5), "Burst 5 differs from Rate 2"},
		{"a bad name", core.Concurrent(2).WithName("a b"), "limit Name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.limit.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestDecisionInFlight(t *testing.T) {
	assert.Equal(t, int64(3), core.Decision{Limit: core.Concurrent(5), Remaining: 2}.InFlight())
	assert.Equal(t, int64(0), core.Decision{Limit: core.PerSecond(5), Remaining: 2}.InFlight(), "not a concurrency limit")
}

func TestLimiterHoldsAndReleasesLeases(t *testing.T) {
	clock := newLeaseClock()
	l, err := core.NewLimiter(leaseStore(t, clock),
		core.WithLimits(core.PerMinute(100), core.Concurrent(2)))
	require.NoError(t, err)
	ctx := context.Background()

	first, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	require.True(t, first.Allowed)
	require.NotNil(t, first.Lease, "an admitted request holds a lease")
	assert.Len(t, first.Lease.ID(), 32)
	assert.Equal(t, []string{"rl:{alice}:2-in-flight:i"}, first.Lease.Keys())
	assert.Equal(t, int64(1), inFlight(t, first))

	second, err := l.AllowN(ctx, "alice", 7)
	require.NoError(t, err)
	require.True(t, second.Allowed)
	assert.NotEqual(t, first.Lease.ID(), second.Lease.ID())
	assert.Equal(t, int64(2), inFlight(t, second), "a cost of 7 takes one lease")
	assert.Equal(t, int64(92), second.Decision(0).Remaining, "the rate limit is charged the cost")

	third, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, third.Allowed)
	assert.Nil(t, third.Lease, "a denial holds nothing")
	b := third.Binding()
	assert.Equal(t, core.Concurrency, b.Limit.Algorithm)
	assert.Equal(t, core.Exhausted, b.Reason)
	assert.Equal(t, time.Second, b.RetryAfter, "an estimate: the oldest lease expires in 30s, capped at 1s")
	assert.Equal(t, int64(92), third.Decision(0).Remaining, "a concurrency denial takes no quota")

	other, err := l.Allow(ctx, "bob")
	require.NoError(t, err)
	assert.True(t, other.Allowed, "clients are independent")
	require.NoError(t, l.Release(ctx, other))

	// The client went away: its context is cancelled, Release still works.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, l.Release(gone, first))
	require.NoError(t, l.Release(ctx, first), "releasing twice is a no-op")
	require.NoError(t, l.Release(ctx, third), "releasing a denial is a no-op")
	require.NoError(t, l.Release(ctx, core.Result{}), "releasing the zero Result is a no-op")

	// No time passed: the deny cache (on by default) did not keep the
	// concurrency denial, and the released place is free at once.
	fourth, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, fourth.Allowed, "a released lease frees its place at once")
	assert.Equal(t, int64(2), inFlight(t, fourth))

	peek, err := l.AllowN(ctx, "alice", 0)
	require.NoError(t, err)
	assert.Nil(t, peek.Lease, "a peek takes no lease")
	assert.Equal(t, int64(2), inFlight(t, peek))
}

func TestLimiterDenyCacheStillCachesRateDenialsBesideConcurrency(t *testing.T) {
	clock := newLeaseClock()
	store := &countingLeaser{Leaser: leaseStore(t, clock)}
	l, err := core.NewLimiter(store,
		core.WithLimits(core.PerMinute(1).WithAlgorithm(core.FixedWindow), core.Concurrent(5)))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	require.True(t, res.Allowed)
	require.NoError(t, l.Release(ctx, res))
	for range 3 {
		res, err = l.Allow(ctx, "alice")
		require.NoError(t, err)
		assert.False(t, res.Allowed)
	}
	assert.Equal(t, int64(2), store.takes.Load(), "the rate denial is exact: later takes come from the deny cache")
}

func TestLimiterRenewsLeases(t *testing.T) {
	clock := newLeaseClock()
	l, err := core.NewLimiter(leaseStore(t, clock),
		core.WithLimits(core.Concurrent(1).WithLeaseTTL(10*time.Second)))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	require.NotNil(t, res.Lease)

	clock.Advance(8 * time.Second)
	require.NoError(t, l.Renew(ctx, res))
	clock.Advance(5 * time.Second) // 13s: held until 18s thanks to the renewal
	denied, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, denied.Allowed, "the renewed lease still holds the place")

	clock.Advance(6 * time.Second) // 19s: expired
	err = l.Renew(ctx, res)
	assert.ErrorIs(t, err, core.ErrLeaseLost)
	next, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, next.Allowed, "an abandoned lease gives its place back after the TTL")
	assert.NoError(t, l.Renew(ctx, core.Result{}), "nothing to renew")
	require.NoError(t, l.Release(ctx, next))
	assert.NoError(t, l.Renew(ctx, next), "a released lease is not renewed")
}

func TestLimiterNeedsALeaserForConcurrencyLimits(t *testing.T) {
	_, err := core.NewLimiter(plainStore{}, core.WithLimits(core.PerSecond(5), core.Concurrent(2)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `limit "2-in-flight" is a Concurrency limit, but the store core_test.plainStore does not implement core.Leaser`)

	clock := newLeaseClock()
	_, err = core.NewLimiter(leaseStore(t, clock), core.WithLimits(core.Concurrent(2)),
		core.WithFailureMode(core.FailLocal), core.WithFallback(plainStore{}, 2))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the fallback store core_test.plainStore does not implement core.Leaser")

	_, err = core.NewLimiter(plainStore{}, core.WithLimits(core.PerSecond(5)))
	assert.NoError(t, err, "rate limits need no Leaser")
}

func TestLimiterFailOpenHoldsNoLease(t *testing.T) {
	l, err := core.NewLimiter(failingLeaser{}, core.WithLimits(core.Concurrent(1)), core.WithoutBreaker())
	require.NoError(t, err)
	ctx := context.Background()
	for range 3 {
		res, err := l.Allow(ctx, "alice")
		require.NoError(t, err)
		assert.True(t, res.Allowed, "fail open admits: in flight is then not enforced")
		assert.True(t, res.Degraded)
		assert.Nil(t, res.Lease)
		assert.NoError(t, l.Release(ctx, res))
	}
}

func TestLimiterFailLocalHoldsTheLeaseOnTheFallback(t *testing.T) {
	clock := newLeaseClock()
	l, err := core.NewLimiter(failingLeaser{}, core.WithLimits(core.Concurrent(4)),
		core.WithFailureMode(core.FailLocal), core.WithFallback(leaseStore(t, clock), 2), core.WithoutBreaker())
	require.NoError(t, err)
	ctx := context.Background()
	var held []core.Result
	for range 2 { // 4 shared among 2 nodes
		res, err := l.Allow(ctx, "alice")
		require.NoError(t, err)
		require.True(t, res.Allowed && res.Fallback)
		require.NotNil(t, res.Lease)
		held = append(held, res)
	}
	res, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, res.Allowed, "the fallback enforces this node's share")
	require.NoError(t, l.Release(ctx, held[0]), "released on the fallback, not on the failing store")
	res, err = l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, res.Allowed)
}

func TestLimiterShadowModeHoldsNoLeaseForADenial(t *testing.T) {
	clock := newLeaseClock()
	l, err := core.NewLimiter(leaseStore(t, clock),
		core.WithLimits(core.Concurrent(1)), core.WithShadow())
	require.NoError(t, err)
	ctx := context.Background()
	first, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	require.NotNil(t, first.Lease)
	second, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, second.Allowed && second.Shadowed)
	assert.Nil(t, second.Lease)
}

func TestReleaseObserverHearsEverySuccessfulReleaseOnce(t *testing.T) {
	obs := &releaseRecorder{}
	l, err := core.NewLimiter(leaseStore(t, newLeaseClock()), core.WithLimits(core.Concurrent(1)), core.WithObserver(obs))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	denied, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	require.Nil(t, denied.Lease)

	require.NoError(t, l.Release(ctx, res))
	require.NoError(t, l.Release(ctx, res))
	require.NoError(t, l.Release(ctx, denied))

	assert.Equal(t, 1, obs.calls, "one call for the one lease, none for a second release or a Result without a lease")
	assert.Empty(t, obs.errs, "a release that worked is reported with a nil error")
}

func TestLimiterReleaseFailureIsObservedNotFatal(t *testing.T) {
	clock := newLeaseClock()
	store := &countingLeaser{Leaser: leaseStore(t, clock), releaseErr: fmt.Errorf("%w: connection refused", core.ErrStoreUnavailable)}
	obs := &releaseRecorder{}
	l, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(1)), core.WithObserver(obs))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	err = l.Release(ctx, res)
	assert.ErrorIs(t, err, core.ErrStoreUnavailable)
	require.Len(t, obs.errs, 1)
	assert.ErrorIs(t, obs.errs[0], core.ErrStoreUnavailable)

	res2, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.False(t, res2.Allowed, "the lease the store did not release holds its place until its TTL")
	clock.Advance(core.DefaultLeaseTTL)
	res2, err = l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, res2.Allowed, "and gives it back after the TTL")
}

// A release is sent whatever the breaker says: skipped, it would keep the
// client's place for the whole lease TTL after the store came back.
func TestLimiterReleaseIsSentBehindAnOpenBreaker(t *testing.T) {
	clock := newLeaseClock()
	store := &countingLeaser{Leaser: leaseStore(t, clock)}
	l, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(1).WithLeaseTTL(time.Hour)),
		core.WithBreaker(core.BreakerConfig{Failures: 1, OpenFor: time.Second}))
	require.NoError(t, err)
	ctx := context.Background()
	res, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	require.NotNil(t, res.Lease)

	store.down.Store(true)
	degraded, err := l.Allow(ctx, "bob") // fails: the breaker opens
	require.NoError(t, err)
	require.True(t, degraded.Degraded)
	require.Equal(t, core.BreakerOpen, l.BreakerState())
	store.down.Store(false) // back, while the breaker is still open

	before := store.releases.Load()
	require.NoError(t, l.Release(ctx, res), "sent and answered, breaker open or not")
	assert.Equal(t, before+1, store.releases.Load(), "one release call")

	clock.Advance(time.Second) // the breaker lets a probe through
	again, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, again.Allowed && !again.Degraded, "alice's place is free long before the hour-long TTL")
}

// A release the store cannot answer is kept and sent again by the first
// calls that reach the store once it answers: a short outage does not lock
// out, for the lease TTL, the clients that had requests in flight.
func TestLimiterReplaysReleasesTheStoreCouldNotAnswer(t *testing.T) {
	tests := []struct {
		name  string
		first string // whose take reaches the store first after the outage
	}{
		{"another client's take sends it", "bob"},
		{"the locked-out client's own take sends it", "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newLeaseClock()
			store := &countingLeaser{Leaser: leaseStore(t, clock)}
			obs := &releaseRecorder{}
			l, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(1).WithLeaseTTL(time.Hour)),
				core.WithoutBreaker(), core.WithObserver(obs))
			require.NoError(t, err)
			ctx := context.Background()
			res, err := l.Allow(ctx, "alice")
			require.NoError(t, err)
			require.NotNil(t, res.Lease)

			store.setReleaseErr(errDown) // the outage: the release fails
			assert.ErrorIs(t, l.Release(ctx, res), core.ErrStoreUnavailable)
			require.Len(t, obs.errs, 1, "the failure is reported")
			store.setReleaseErr(nil) // the store is back

			first, err := l.Allow(ctx, tt.first)
			require.NoError(t, err)
			if tt.first == "alice" {
				assert.False(t, first.Allowed, "decided before the replay: the lease was still held")
				clock.Advance(core.ConcurrencyRetryAfter) // its denial's RetryAfter (the deny cache keeps it)
			}
			next, err := l.Allow(ctx, "alice")
			require.NoError(t, err)
			assert.True(t, next.Allowed, "the kept release was sent: alice is not locked out for the TTL")
		})
	}
}

// A take the store reports it never ran (core.ErrNotRun) charged nothing
// and holds no lease: no release is sent for it. A take that may have run
// gets its lease released at once.
func TestLimiterReleasesOnlyTakesThatMayHaveRun(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		releases int64
	}{
		{"never sent", fmt.Errorf("%w: not sent: %w", core.ErrStoreUnavailable, core.ErrNotRun), 0},
		{"reply lost", fmt.Errorf("%w: i/o timeout", core.ErrStoreUnavailable), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &countingLeaser{Leaser: leaseStore(t, newLeaseClock()), takeErr: tt.err}
			l, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(1)), core.WithoutBreaker())
			require.NoError(t, err)
			res, err := l.Allow(context.Background(), "alice")
			require.NoError(t, err)
			assert.True(t, res.Degraded)
			assert.Equal(t, tt.releases, store.releases.Load())
		})
	}
}

// plainStore is a store that cannot hold leases.
type plainStore struct{}

func (plainStore) Take(_ context.Context, dst []core.Decision, _ []string, limits []core.Limit, _ int64) ([]core.Decision, error) {
	for _, l := range limits {
		dst = append(dst, core.Decision{Limit: l, Allowed: true, Remaining: l.Capacity()})
	}
	return dst, nil
}

// failingLeaser is a Leaser that is always unavailable.
type failingLeaser struct{}

var errDown = fmt.Errorf("%w: down", core.ErrStoreUnavailable)

func (failingLeaser) Capabilities() core.Capabilities { return core.Capabilities{Leases: true} }

func (failingLeaser) Take(_ context.Context, dst []core.Decision, _ []string, _ []core.Limit, _ int64) ([]core.Decision, error) {
	return dst, errDown
}

func (failingLeaser) TakeLease(_ context.Context, dst []core.Decision, _ []string, _ []core.Limit, _ int64, _ string) ([]core.Decision, error) {
	return dst, errDown
}

func (failingLeaser) Release(context.Context, string, core.Limit, string) error { return errDown }

func (failingLeaser) Renew(context.Context, string, core.Limit, string) (bool, error) {
	return false, errDown
}

// countingLeaser counts the calls to another Leaser; it may fail Release,
// or be down (every take fails as unavailable).
type countingLeaser struct {
	core.Leaser
	releaseErr      error
	takeErr         error // every TakeLease fails with it
	down            atomic.Bool
	takes, releases atomic.Int64
	mu              sync.Mutex // guards releaseErr once the test runs
}

func (s *countingLeaser) setReleaseErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseErr = err
}

// Capabilities implements core.Capable: the wrapped store's clock, which
// the limiter follows as it would without the wrapper, and its leases.
// The wrapper may be down: it is not NonBlocking.
func (s *countingLeaser) Capabilities() core.Capabilities {
	c := core.CapabilitiesOf(s.Leaser)
	return core.Capabilities{Clock: c.Clock, Leases: c.Leases}
}

func (s *countingLeaser) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.takes.Add(1)
	if s.down.Load() {
		return dst, errDown
	}
	return s.Leaser.Take(ctx, dst, keys, limits, cost)
}

func (s *countingLeaser) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	s.takes.Add(1)
	if s.down.Load() {
		return dst, errDown
	}
	if s.takeErr != nil {
		return dst, s.takeErr
	}
	return s.Leaser.TakeLease(ctx, dst, keys, limits, cost, lease)
}

func (s *countingLeaser) Release(ctx context.Context, key string, l core.Limit, lease string) error {
	s.releases.Add(1)
	s.mu.Lock()
	err := s.releaseErr
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.Leaser.Release(ctx, key, l, lease)
}

// releaseRecorder is a ReleaseObserver that records the release errors,
// and how many releases it heard of.
type releaseRecorder struct {
	mu    sync.Mutex
	errs  []error
	calls int
}

func (*releaseRecorder) Decided(context.Context, core.Request, core.Result) {}
func (*releaseRecorder) BreakerChanged(_, _ core.BreakerState)              {}
func (r *releaseRecorder) Released(_ context.Context, _ core.Result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

func TestSlogObserverLogsAFailedRelease(t *testing.T) {
	var buf strings.Builder
	obs := core.NewSlogObserver(slog.New(slog.NewTextHandler(&buf, nil)))
	var _ core.ReleaseObserver = obs
	obs.Released(context.Background(), core.Result{Tier: "free"}, nil)
	assert.Empty(t, buf.String(), "a release that worked is not logged")
	obs.Released(context.Background(), core.Result{Tier: "free"}, errDown)
	assert.Contains(t, buf.String(), "lease not released")
	assert.Contains(t, buf.String(), "tier=free")
}

func TestLimiterReleasesTheLeaseOfATakeWhoseReplyWasLost(t *testing.T) {
	clock := newLeaseClock()
	store := &lostReplyLeaser{countingLeaser: countingLeaser{Leaser: leaseStore(t, clock)}}
	l, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(1)), core.WithoutBreaker())
	require.NoError(t, err)
	ctx := context.Background()
	store.lose.Store(true)
	res, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	require.True(t, res.Degraded, "the store's reply was lost: fail open")
	assert.Nil(t, res.Lease)
	assert.Equal(t, int64(1), store.releases.Load(), "the lease the store took anyway is released")

	store.lose.Store(false)
	next, err := l.Allow(ctx, "alice")
	require.NoError(t, err)
	assert.True(t, next.Allowed, "the place did not stay taken until the TTL")
}

// lostReplyLeaser takes leases but, when lose is set, answers as if the
// reply had been lost to a timeout.
type lostReplyLeaser struct {
	countingLeaser
	lose atomic.Bool
}

func (s *lostReplyLeaser) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	ds, err := s.countingLeaser.TakeLease(ctx, dst, keys, limits, cost, lease)
	if s.lose.Load() {
		return dst, fmt.Errorf("%w: i/o timeout", core.ErrStoreUnavailable)
	}
	return ds, err
}
