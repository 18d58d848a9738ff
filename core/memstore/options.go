package memstore

import (
	"fmt"
	"time"
)

// An Option configures a [Store] at construction ([New]).
type Option func(*config) error

// Defaults of [New].
const (
	// DefaultMaxKeys is the default cap on stored keys ([WithMaxKeys]).
	DefaultMaxKeys = 1 << 20
	// DefaultShards is the default number of shards ([WithShards]).
	DefaultShards = 64
	// maxShards bounds [WithShards].
	maxShards = 1 << 16
)

type config struct {
	clock     func() time.Time
	maxKeys   int
	shards    int
	shardsSet bool
}

// WithClock sets the clock the store reads the time from, for tests. The
// default is the wall clock read once at [New], then advanced by the
// monotonic clock: one clock read per take instead of two, and immune to
// wall-clock steps. Whatever the clock, a reading that goes back admits no
// more than the limits allow (see [Store]). It is the one clock a test sets:
// a [core.Limiter] over the store times its deny cache, tier cache and
// breaker with it too ([Store.Clock]).
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("ratelimit: memstore: WithClock: clock must not be nil")
		}
		c.clock = now
		return nil
	}
}

// WithMaxKeys caps the number of stored keys at n (default
// [DefaultMaxKeys]). When a shard is full, a new key first replaces
// expired entries, then the entry closest to expiry among a small random
// sample: clients rotating identities cannot grow memory past n, at the
// price of resetting the evicted client's state.
func WithMaxKeys(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("ratelimit: memstore: WithMaxKeys must be positive, got %d", n)
		}
		c.maxKeys = n
		return nil
	}
}

// WithShards sets the number of shards, each with its own lock and an
// equal part of [WithMaxKeys]; n must be a power of two between 1 and 65536
// and at most the number of keys (default [DefaultShards], fewer when
// WithMaxKeys is smaller).
func WithShards(n int) Option {
	return func(c *config) error {
		if n <= 0 || n > maxShards || n&(n-1) != 0 {
			return fmt.Errorf("ratelimit: memstore: WithShards must be a power of two between 1 and %d, got %d", maxShards, n)
		}
		c.shards, c.shardsSet = n, true
		return nil
	}
}

func newConfig(opts []Option) (config, error) {
	c := config{maxKeys: DefaultMaxKeys, shards: DefaultShards}
	for _, opt := range opts {
		if err := opt(&c); err != nil {
			return config{}, err
		}
	}
	if c.maxKeys < c.shards {
		if c.shardsSet {
			return config{}, fmt.Errorf("ratelimit: memstore: WithMaxKeys(%d) is smaller than WithShards(%d): every shard needs room for a key", c.maxKeys, c.shards)
		}
		for c.shards > c.maxKeys {
			c.shards /= 2
		}
	}
	return c, nil
}
