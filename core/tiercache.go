package core

import (
	"context"
	"sync"
	"time"
)

// tierCache remembers a [TierResolver]'s answers for ttl, in at most size
// entries. When full, it drops expired entries, then arbitrary ones (Go's
// map order), so a client rotating identities cannot grow it. Entries are
// keyed by the safe identity ([SafeIdentity]), as store keys are, so an
// entry holds at most [MaxIdentityLen] bytes of a client's identity however
// long it is. Errors are not cached: the next request asks the resolver
// again.
type tierCache struct {
	resolve TierResolver
	ttl     time.Duration
	size    int
	now     clockFunc

	mu      sync.Mutex
	entries map[string]tierEntry
}

type tierEntry struct {
	tier    string
	expires time.Time
}

func newTierCache(resolve TierResolver, ttl time.Duration, size int, now clockFunc) *tierCache {
	return &tierCache{resolve: resolve, ttl: ttl, size: size, now: now, entries: make(map[string]tierEntry)}
}

// tier returns the cached tier of identity, asking the resolver on a miss.
func (c *tierCache) tier(ctx context.Context, identity string) (string, error) {
	now, key := c.now(), SafeIdentity(identity)
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.tier, nil
	}
	tier, err := c.resolve(ctx, identity)
	if err != nil {
		return "", err
	}
	c.store(key, tierEntry{tier: tier, expires: now.Add(c.ttl)}, now)
	return tier, nil
}

func (c *tierCache) store(key string, e tierEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		c.evict(now)
	}
	c.entries[key] = e
}

func (c *tierCache) evict(now time.Time) {
	evictSampled(c.entries, func(e tierEntry) bool { return !now.Before(e.expires) })
}

// evictSample is how many entries evictSampled looks at: a bounded sample
// keeps an insert O(1) even when an attacker keeps a cache full.
const evictSample = 8

// evictSampled frees at least one entry of m: the expired ones among a
// sample of evictSample entries (Go's map order is random), or else the
// first one seen.
func evictSampled[K comparable, V any](m map[K]V, expired func(V) bool) {
	var first K
	seen, freed := 0, 0
	for k, v := range m {
		if seen == 0 {
			first = k
		}
		if expired(v) {
			delete(m, k)
			freed++
		}
		if seen++; seen == evictSample {
			break
		}
	}
	if freed == 0 {
		delete(m, first)
	}
}

func (c *tierCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
