package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// Check peeks and charges nothing; Charge then takes the charge it
// returned, unseen by observers; a denied check leaves nothing to charge.
func TestCheckThenCharge(t *testing.T) {
	obs := &decisionCount{}
	l := newTestLimiter(t, core.WithLimits(core.PerMinute(2).WithName("m")), core.WithObserver(obs))
	ctx := context.Background()
	req := core.Request{Identity: "client", Cost: 1}

	res, charge, err := l.Check(ctx, req)
	require.NoError(t, err)
	assert.True(t, res.Allowed)
	assert.Equal(t, int64(2), res.Binding().Remaining, "a check charges nothing")
	assert.Equal(t, core.Request{Identity: "client", Tier: "default", Cost: 1}, charge, "the tier the check applied")

	for range 2 {
		res, err = l.Charge(ctx, charge)
		require.NoError(t, err)
		assert.True(t, res.Allowed)
	}
	assert.Equal(t, int64(0), res.Binding().Remaining)
	assert.Equal(t, 1, obs.n(), "observers see the check, not the charges")

	res, charge, err = l.Check(ctx, req)
	require.NoError(t, err)
	assert.False(t, res.Allowed, "the quota is spent")
	assert.Equal(t, int64(0), charge.Cost, "nothing to charge after a denied check")
	res, err = l.Charge(ctx, charge)
	require.NoError(t, err)
	assert.Equal(t, 0, res.Len(), "a charge of 0 asks no store")
}

// The accessors a front end reads instead of the limiter's fields.
func TestLimiterSeamsForFrontEnds(t *testing.T) {
	tiers := core.WithTiers(
		core.Tier{Name: "free", Limits: []core.Limit{core.PerMinute(1).WithName("minute")}},
		core.Tier{Name: "pro", Limits: []core.Limit{core.PerMinute(5).WithName("minute"), core.Concurrent(2).WithName("inflight").WithLeaseTTL(9 * time.Second)}},
	)
	l := newTestLimiter(t, tiers, core.WithDefaultTier("free"))
	assert.Equal(t, "free", l.DefaultTier())
	assert.Equal(t, []string{"free", "pro"}, l.Tiers())
	assert.False(t, l.HasTierResolver())
	tier, limit, ok := l.ConcurrencyLimit()
	assert.True(t, ok)
	assert.Equal(t, "pro", tier)
	assert.Equal(t, "inflight", limit)
	assert.Equal(t, middlewareNow, l.Now(), "the store's clock")

	res, err := l.Take(context.Background(), core.Request{Identity: "c", Tier: "pro", Cost: 1})
	require.NoError(t, err)
	require.NotNil(t, res.Lease)
	assert.Equal(t, 9*time.Second, res.Lease.TTL())
	assert.Equal(t, 1, res.BindingIndex(), "the in-flight limit has fewer left (1 of 2) than the rate limit (4 of 5)")

	resolved := newTestLimiter(t, tiers, core.WithTierResolver(func(context.Context, string) (string, error) { return "pro", nil }, 0, 0))
	assert.True(t, resolved.HasTierResolver())
	_, _, ok = newTestLimiter(t, core.WithLimits(core.PerMinute(1))).ConcurrencyLimit()
	assert.False(t, ok)
	assert.Equal(t, -1, core.NewResult().BindingIndex())
}

// Limiter.Renew reports every renewal to the RenewObservers, as Release
// reports to the ReleaseObservers, whoever calls it.
func TestRenewTellsTheRenewObservers(t *testing.T) {
	obs := &renewCount{}
	l := newTestLimiter(t, core.WithLimits(core.Concurrent(1)), core.WithObserver(obs))
	ctx := context.Background()
	res, err := l.Allow(ctx, "c")
	require.NoError(t, err)
	require.NoError(t, l.Renew(ctx, res))
	require.NoError(t, l.Release(ctx, res))
	require.NoError(t, l.Renew(ctx, res), "a released lease is not renewed")
	assert.Equal(t, []error{nil}, obs.all(), "one renewal, reported once")
}

type decisionCount struct {
	mu      sync.Mutex
	decided int
}

func (o *decisionCount) Decided(context.Context, core.Request, core.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.decided++
}
func (o *decisionCount) BreakerChanged(core.BreakerState, core.BreakerState) {}
func (o *decisionCount) n() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.decided
}

type renewCount struct {
	mu   sync.Mutex
	errs []error
}

func (o *renewCount) Decided(context.Context, core.Request, core.Result)  {}
func (o *renewCount) BreakerChanged(core.BreakerState, core.BreakerState) {}
func (o *renewCount) Renewed(_ context.Context, _ core.Result, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, err)
}
func (o *renewCount) all() []error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]error(nil), o.errs...)
}
