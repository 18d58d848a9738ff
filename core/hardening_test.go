package core

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/logsample"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// gateStore denies its first call (RetryAfter 100 ms), then blocks every
// later call until gate is closed or the call's context is done.
type gateStore struct {
	recordingStore
	gate    chan struct{}
	entered chan struct{}
}

func (s *gateStore) Take(ctx context.Context, dst []Decision, keys []string, limits []Limit, cost int64) ([]Decision, error) {
	s.mu.Lock()
	first := len(s.calls) == 0
	s.mu.Unlock()
	if !first {
		s.entered <- struct{}{}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return dst, ctx.Err()
		}
	}
	return s.recordingStore.Take(ctx, dst, keys, limits, cost)
}

// A request waiting for the deny cache's probe whose client goes away gets
// its context's error: before, it went on to the store with a done context
// and failed open.
func TestDenyCacheWaiterWhoseCallerIsGone(t *testing.T) {
	clock := newManualClock()
	store := &gateStore{recordingStore: recordingStore{deny: map[string]bool{"s": true}},
		gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	store.now = clock.Now // the limiter follows its store's clock
	l := MustNewLimiter(store, WithLimits(PerSecond(10).WithName("s")), WithDenyCache(10))
	ctx := context.Background()
	res, err := l.Allow(ctx, "a")
	require.NoError(t, err)
	require.False(t, res.Allowed)

	clock.Advance(time.Second) // the denial ran out: the next request probes
	probeDone := make(chan error, 1)
	go func() {
		_, err := l.Allow(ctx, "a")
		probeDone <- err
	}()
	<-store.entered // the probe is in the store

	gone, cancel := context.WithCancel(ctx)
	waiterDone := make(chan struct{})
	var waiter Result
	var waiterErr error
	go func() {
		waiter, waiterErr = l.Allow(gone, "a")
		close(waiterDone)
	}()
	cancel()
	<-waiterDone
	assert.ErrorIs(t, waiterErr, context.Canceled)
	assert.False(t, waiter.Allowed, "a waiter that gave up was admitted")

	close(store.gate)
	require.NoError(t, <-probeDone)
}

// A request that can never fit gets CostTooHigh (413) even while a denial
// of the same client is cached: the cached 429 would invite retries that
// can never succeed. Both ways to the deny cache: a take, and the check
// before the handler of WithChargeIf (Limiter.check), which reads the
// cache without waiting for a probe.
func TestDenyCacheDoesNotAnswerACostThatCanNeverFit(t *testing.T) {
	tests := []struct {
		name string
		take func(l *Limiter, cost int64) (Result, error)
	}{
		{"Take", func(l *Limiter, cost int64) (Result, error) {
			return l.AllowN(context.Background(), "a", cost)
		}},
		{"the check of WithChargeIf", func(l *Limiter, cost int64) (Result, error) {
			var res Result
			_, err := l.check(context.Background(), Request{Identity: "a", Cost: cost}, &res)
			return res, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newManualClock()
			store := &recordingStore{deny: map[string]bool{"s": true}}
			store.now = clock.Now // the limiter follows its store's clock
			l := MustNewLimiter(&capacityStore{store}, WithLimits(PerSecond(5).WithName("s")), WithDenyCache(10))
			res, err := l.Allow(context.Background(), "a")
			require.NoError(t, err)
			require.Equal(t, Exhausted, res.Binding().Reason)

			res, err = tt.take(l, 6)
			require.NoError(t, err)
			assert.Equal(t, CostTooHigh, res.Binding().Reason)
			assert.False(t, res.Degraded, "a real denial, answered 413 by httplimit.DenyStatus: the cost can never fit")

			res, err = tt.take(l, 5)
			require.NoError(t, err)
			assert.Equal(t, Exhausted, res.Binding().Reason, "a cost that fits the capacity is still served from the cache")
			assert.Len(t, store.calls, 2)
		})
	}
}

// capacityStore answers CostTooHigh for a cost above a limit's capacity,
// as every real store does, and asks next otherwise.
type capacityStore struct{ next *recordingStore }

func (s *capacityStore) Capabilities() Capabilities { return s.next.Capabilities() }

func (s *capacityStore) Take(ctx context.Context, dst []Decision, keys []string, limits []Limit, cost int64) ([]Decision, error) {
	ds, err := s.next.Take(ctx, dst, keys, limits, cost)
	for i := range ds {
		if cost > ds[i].Limit.Capacity() {
			ds[i] = Decision{Limit: ds[i].Limit, Reason: CostTooHigh}
		}
	}
	return ds, err
}

// The tier cache and the deny cache hold at most MaxIdentityLen bytes of an
// identity, however long the identities a client sends.
func TestCachesHoldBoundedIdentities(t *testing.T) {
	huge := strings.Repeat("x", 600<<10)
	store := &recordingStore{deny: map[string]bool{"s": true}}
	l := MustNewLimiter(store, WithTier("free", PerSecond(1).WithName("s")), WithDenyCache(100),
		WithTierResolver(func(context.Context, string) (string, error) { return "free", nil }, time.Minute, 100))
	for i := range 50 {
		res, err := l.Allow(context.Background(), fmt.Sprint(huge, i))
		require.NoError(t, err)
		require.False(t, res.Allowed)
	}
	require.Equal(t, 50, l.tiers.len())
	for k := range l.tiers.defaulted {
		assert.LessOrEqual(t, len(k), MaxIdentityLen, "tier cache key")
	}
	l.denied.mu.Lock()
	defer l.denied.mu.Unlock()
	require.Len(t, l.denied.entries, 50)
	for k := range l.denied.entries {
		assert.LessOrEqual(t, len(k), MaxIdentityLen, "deny cache key")
	}
}

// With no observer, a store failing every take open is logged (sampled),
// never silent.
func TestStoreFailuresAreLoggedWithoutAnObserver(t *testing.T) {
	buf := logtest.CaptureDefault(t, slog.LevelDebug)
	l := MustNewLimiter(&recordingStore{err: errDown}, WithLimits(PerSecond(1)))
	for range 100 {
		res, err := l.Allow(context.Background(), "a")
		require.NoError(t, err)
		require.True(t, res.Degraded)
	}
	lines := logtest.Lines(buf)
	require.NotEmpty(t, lines, "a store failing open logged nothing")
	assert.LessOrEqual(t, len(lines), logsample.Burst+1, "sampled")
	assert.Contains(t, lines[0], "store unavailable")
	assert.Contains(t, lines[0], "level=ERROR")

	buf.Reset()
	denied := MustNewLimiter(&recordingStore{deny: map[string]bool{"s": true}}, WithLimits(PerSecond(1).WithName("s")))
	_, err := denied.Allow(context.Background(), "a")
	require.NoError(t, err)
	assert.Empty(t, buf.String(), "the default log is for failures, not violations")
}
