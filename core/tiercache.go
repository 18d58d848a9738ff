package core

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"
)

// tierCache remembers a [TierResolver]'s answers for ttl, in at most size
// entries. When full, it drops expired entries, then arbitrary ones (Go's
// map order), so a client rotating keys cannot grow it. Entries are keyed
// by the SHA-256 of the lookup key, never the key itself: the key may be a
// raw API key, which must not sit in memory for the life of the entry, and
// an entry costs 32 bytes however long the key is. Errors are not cached:
// the next request asks the resolver again.
type tierCache struct {
	resolve TierResolver
	ttl     time.Duration
	size    int
	now     clockFunc

	mu      sync.Mutex
	entries map[[sha256.Size]byte]tierEntry
}

type tierEntry struct {
	tier    string
	expires time.Time
}

func newTierCache(resolve TierResolver, ttl time.Duration, size int, now clockFunc) *tierCache {
	return &tierCache{resolve: resolve, ttl: ttl, size: size, now: now, entries: make(map[[sha256.Size]byte]tierEntry)}
}

// tier returns the cached tier of lookup, asking the resolver on a miss.
func (c *tierCache) tier(ctx context.Context, lookup string) (string, error) {
	now, key := c.now(), sha256.Sum256([]byte(lookup))
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.tier, nil
	}
	tier, err := c.resolve(ctx, lookup)
	if err != nil {
		return "", err
	}
	c.store(key, tierEntry{tier: tier, expires: now.Add(c.ttl)}, now)
	return tier, nil
}

func (c *tierCache) store(key [sha256.Size]byte, e tierEntry, now time.Time) {
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
