package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// proResolver knows one pro API key; "broken" makes it fail.
func proResolver(_ context.Context, apiKey string) (string, error) {
	switch apiKey {
	case "pro-key-123":
		return "pro", nil
	case "broken":
		return "", errors.New("plans database down")
	}
	return "free", nil
}

// countingResolver counts calls per lookup key.
type countingResolver struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingResolver) resolve(ctx context.Context, key string) (string, error) {
	c.mu.Lock()
	c.calls[key]++
	c.mu.Unlock()
	return proResolver(ctx, key)
}

func (c *countingResolver) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[key]
}

// Callers without HTTP pass the lookup key in the Request.
func TestTierResolverGetsTheRequestsTierKey(t *testing.T) {
	resolver := &countingResolver{calls: map[string]int{}}
	l := newTestLimiter(t, core.WithTiers(
		core.Tier{Name: "free", Limits: []core.Limit{core.PerMinute(2)}},
		core.Tier{Name: "pro", Limits: []core.Limit{core.PerMinute(100)}},
	), core.WithTierResolver(resolver.resolve, 0, 0))
	ctx := context.Background()
	for range 5 {
		res, err := l.Take(ctx, core.Request{Identity: "user-7", TierKey: "pro-key-123", Cost: 1})
		require.NoError(t, err)
		assert.Equal(t, "pro", res.Tier)
	}
	assert.Equal(t, 1, resolver.count("pro-key-123"))
	res, err := l.Take(ctx, core.Request{Identity: "user-8", Cost: 1})
	require.NoError(t, err)
	assert.Equal(t, "free", res.Tier)
	assert.Equal(t, 1, resolver.count("user-8"), "without a TierKey the resolver gets the identity")
}

type observerFunc func(core.Request, core.Result)

func (f observerFunc) Decided(_ context.Context, req core.Request, res core.Result) { f(req, res) }
func (observerFunc) BreakerChanged(from, to core.BreakerState)                      {}
