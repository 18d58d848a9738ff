// Package tiertest holds tier resolvers for the tests of core and
// core/httplimit.
package tiertest

import (
	"context"
	"errors"
	"sync"
)

// ProResolver knows one pro API key, "pro-key-123"; "broken" makes it
// fail; every other key is on "free".
func ProResolver(_ context.Context, apiKey string) (string, error) {
	switch apiKey {
	case "pro-key-123":
		return "pro", nil
	case "broken":
		return "", errors.New("plans database down")
	}
	return "free", nil
}

// CountingResolver is [ProResolver] counting its calls per lookup key. It
// is safe for concurrent use.
type CountingResolver struct {
	mu    sync.Mutex
	calls map[string]int
}

// NewCountingResolver returns a CountingResolver that has been called for
// no key.
func NewCountingResolver() *CountingResolver {
	return &CountingResolver{calls: map[string]int{}}
}

// Resolve is a core.TierResolver.
func (c *CountingResolver) Resolve(ctx context.Context, key string) (string, error) {
	c.mu.Lock()
	c.calls[key]++
	c.mu.Unlock()
	return ProResolver(ctx, key)
}

// Count returns how many times key was resolved.
func (c *CountingResolver) Count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[key]
}
