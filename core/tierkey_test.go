package core_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/tiertest"
)

// Callers without HTTP pass the lookup key in the Request.
func TestTierResolverGetsTheRequestsTierKey(t *testing.T) {
	resolver := tiertest.NewCountingResolver()
	l := newTestLimiter(t, core.WithTiers(
		core.Tier{Name: "free", Limits: []core.Limit{core.PerMinute(2)}},
		core.Tier{Name: "pro", Limits: []core.Limit{core.PerMinute(100)}},
	), core.WithTierResolver(resolver.Resolve, 0, 0))
	ctx := context.Background()
	for range 5 {
		res, err := l.Take(ctx, core.Request{Identity: "user-7", TierKey: "pro-key-123", Cost: 1})
		require.NoError(t, err)
		assert.Equal(t, "pro", res.Tier)
	}
	assert.Equal(t, 1, resolver.Count("pro-key-123"))
	res, err := l.Take(ctx, core.Request{Identity: "user-8", Cost: 1})
	require.NoError(t, err)
	assert.Equal(t, "free", res.Tier)
	assert.Equal(t, 1, resolver.Count("user-8"), "without a TierKey the resolver gets the identity")
}

type observerFunc func(core.Request, core.Result)

func (f observerFunc) Decided(_ context.Context, req core.Request, res core.Result) { f(req, res) }
func (observerFunc) BreakerChanged(from, to core.BreakerState)                      {}
