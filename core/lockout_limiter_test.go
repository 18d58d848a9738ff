package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// newLockoutLimiter returns a limiter of limit over a counted memstore on
// a fake clock.
func newLockoutLimiter(t *testing.T, limit core.Limit) (*core.Limiter, *countedStore, *fakeClock) {
	t.Helper()
	clk := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	ms, err := memstore.New(memstore.WithClock(clk.Now))
	require.NoError(t, err)
	store := &countedStore{Store: ms}
	l, err := core.NewLimiter(store, core.WithLimits(limit))
	require.NoError(t, err)
	return l, store, clk
}

// Every denial counted toward a lockout reaches the store, so that After
// denials lock the client out, not After per RetryAfter; the lockout is
// then answered by the deny cache until it ends, for any cost.
func TestDenyCacheCountsDenialsAndCachesTheLockout(t *testing.T) {
	limit := core.PerMinute(5).WithName("login").WithLockout(core.Lockout{After: 3, Within: time.Minute, For: 10 * time.Minute})
	l, store, clk := newLockoutLimiter(t, limit)
	ctx := context.Background()
	take := func(cost int64) core.Decision {
		t.Helper()
		res, err := l.AllowN(ctx, "mallory", cost)
		require.NoError(t, err)
		return res.Binding()
	}

	require.True(t, take(5).Allowed)
	for i := range 2 {
		d := take(1)
		require.Equal(t, core.Exhausted, d.Reason, "denial %d", i+1)
	}
	assert.Equal(t, int64(3), store.takes.Load(), "each counted denial asked the store")
	d := take(1)
	require.Equal(t, core.LockedOut, d.Reason, "the third denial")
	assert.Equal(t, 10*time.Minute, d.RetryAfter)
	assert.Equal(t, int64(4), store.takes.Load())

	clk.Advance(10*time.Minute - time.Second)
	for _, cost := range []int64{1, 5, 1} {
		d := take(cost)
		assert.Equal(t, core.LockedOut, d.Reason, "cost %d", cost)
		assert.Equal(t, time.Second, d.RetryAfter, "cost %d", cost)
	}
	assert.Equal(t, int64(4), store.takes.Load(), "the lockout is answered by the deny cache, for every cost")

	clk.Advance(time.Second)
	assert.True(t, take(1).Allowed, "the lockout ended: the store admits, the quota refilled meanwhile")
	assert.Equal(t, int64(5), store.takes.Load())
}

// A peek (Check's first step, cost 0) of a client locked out is denied
// too, and a Check charges nothing.
func TestCheckOfALockedOutClient(t *testing.T) {
	limit := core.PerMinute(1).WithName("login").WithLockout(core.Lockout{After: 1, Within: time.Minute, For: time.Hour})
	l, _, _ := newLockoutLimiter(t, limit)
	ctx := context.Background()
	for range 2 {
		_, err := l.Allow(ctx, "mallory")
		require.NoError(t, err)
	}
	res, charge, err := l.Check(ctx, core.Request{Identity: "mallory", Cost: 1})
	require.NoError(t, err)
	assert.False(t, res.Allowed)
	assert.Equal(t, core.LockedOut, res.Binding().Reason)
	assert.Equal(t, time.Hour, res.Binding().RetryAfter)
	assert.Zero(t, charge.Cost, "nothing to charge after a denied check")
	peek, err := l.AllowN(ctx, "mallory", 0)
	require.NoError(t, err)
	assert.Equal(t, core.LockedOut, peek.Binding().Reason, "a peek reports the lockout")
}
