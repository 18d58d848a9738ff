package core

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
)

var (
	// ErrTierStale is in the [Result.TierErr] of a request whose tier
	// resolver failed (an error or no answer within its time) while the
	// limiter still knew the tier of its lookup key from an earlier answer:
	// that tier was kept ([WithTierStale]). Without it, TierErr means the
	// default tier applied.
	ErrTierStale = errors.New("ratelimit: tier resolver failed, last known tier kept")
	// ErrTierTimeout is in the [Result.TierErr] of a request whose tier
	// resolver did not answer within [WithTierTimeout].
	ErrTierTimeout = errors.New("ratelimit: tier resolver did not answer in time")
	// errTierBusy: too many lookups in flight.
	errTierBusy = errors.New("ratelimit: too many tier lookups in flight")
)

// maxTierLookups bounds the resolver calls in flight at once (one per
// lookup key): beyond it a request falls back at once, as on a failure. A
// plan database serves a few dozen queries at once; more than this many
// waiting means it is down or a flood of new keys is arriving, and queueing
// more would only hold more requests.
const maxTierLookups = 1024

// tierCache remembers a [TierResolver]'s answers for ttl, and keeps them
// stale more to answer for a resolver that fails. Answers naming a tier
// other than the default (a customer's plan) and the others ("", an
// unknown key, or the default tier's name) live in two maps of at most size
// entries each, so a flood of invented keys evicts only other keys of the
// default tier, never a customer's plan. When a map is full,
// it drops expired entries, then arbitrary ones (Go's map order). Entries
// are keyed by the SHA-256 of the lookup key, never the key itself: the key
// may be a raw API key, which must not sit in memory for the life of the
// entry, and an entry costs 32 bytes however long the key is. Errors are
// not cached: the next request asks the resolver again.
//
// Concurrent misses of one key share one resolver call (a flight), which
// runs in a goroutine of its own under a deadline of timeout, so that a
// resolver that ignores its context holds no request past timeout; the
// goroutine ends when the resolver returns, and its answer is cached even
// when every request stopped waiting.
type tierCache struct {
	resolve TierResolver
	ttl     time.Duration
	stale   time.Duration
	timeout time.Duration
	size    int
	def     string // the default tier's name
	now     clockFunc

	mu        sync.Mutex
	tiered    map[[sha256.Size]byte]tierEntry // answers naming a tier other than def
	defaulted map[[sha256.Size]byte]tierEntry // answers of "" or def
	flights   map[[sha256.Size]byte]*tierFlight
}

type tierEntry struct {
	tier    string
	expires time.Time
}

// A tierFlight is one resolver call that the requests missing its key wait
// for.
type tierFlight struct {
	done chan struct{} // closed when tier and err are set
	tier string
	err  error
}

func newTierCache(cfg tierConfig, def string, now clockFunc) *tierCache {
	return &tierCache{resolve: cfg.resolve, ttl: cfg.ttl, stale: cfg.stale, timeout: cfg.timeout, size: cfg.size,
		def: def, now: now, tiered: make(map[[sha256.Size]byte]tierEntry),
		defaulted: make(map[[sha256.Size]byte]tierEntry), flights: make(map[[sha256.Size]byte]*tierFlight)}
}

// tierKeyHash is the key of lookup's answer.
func tierKeyHash(lookup string) [sha256.Size]byte {
	return sha256.Sum256([]byte(lookup))
}

// cached returns the answer held for key, if any, and whether it is still
// fresh (not past its ttl).
func (c *tierCache) cached(key [sha256.Size]byte) (e tierEntry, ok, fresh bool) {
	c.mu.Lock()
	e, ok = c.tiered[key]
	if !ok {
		e, ok = c.defaulted[key]
	}
	c.mu.Unlock()
	return e, ok, ok && c.now().Before(e.expires)
}

// tier returns the tier of lookup (whose hash is key): the cached answer,
// else the resolver's. When the resolver fails, an answer that expired
// less than stale ago is kept, with an error wrapping [ErrTierStale];
// otherwise the tier is "" and the error says why.
func (c *tierCache) tier(ctx context.Context, key [sha256.Size]byte, lookup string) (string, error) {
	e, ok, fresh := c.cached(key)
	if fresh {
		return e.tier, nil
	}
	tier, err := c.ask(ctx, key, lookup)
	if err == nil {
		return tier, nil
	}
	if ok && e.tier != "" && c.now().Before(e.expires.Add(c.stale)) {
		return e.tier, fmt.Errorf("%w (%q): %w", ErrTierStale, e.tier, err)
	}
	return "", err
}

// ask waits up to timeout for the resolver's answer for key, joining the
// flight of key or starting one.
func (c *tierCache) ask(ctx context.Context, key [sha256.Size]byte, lookup string) (string, error) {
	f, err := c.join(ctx, key, lookup)
	if err != nil {
		return "", err
	}
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case <-f.done:
		return f.tier, f.err
	case <-timer.C:
		return "", fmt.Errorf("%w (%s)", ErrTierTimeout, c.timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// join returns the flight of key, starting it when none runs.
func (c *tierCache) join(ctx context.Context, key [sha256.Size]byte, lookup string) (*tierFlight, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.flights[key]; f != nil {
		return f, nil
	}
	if len(c.flights) >= maxTierLookups {
		return nil, errTierBusy
	}
	f := &tierFlight{done: make(chan struct{})}
	c.flights[key] = f
	// The flight outlives the request that started it (others wait for
	// it too), so it keeps ctx's values but not its cancellation.
	go c.fly(context.WithoutCancel(ctx), key, lookup, f)
	return f, nil
}

// fly calls the resolver for the flight f of key and lands its answer.
func (c *tierCache) fly(ctx context.Context, key [sha256.Size]byte, lookup string, f *tierFlight) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	f.tier, f.err = c.resolve(ctx, lookup)
	c.mu.Lock()
	delete(c.flights, key)
	if f.err == nil {
		c.storeLocked(key, tierEntry{tier: f.tier, expires: c.now().Add(c.ttl)})
	}
	c.mu.Unlock()
	close(f.done)
}

// plan reports whether tier, an answer of the resolver, names a tier of
// its own: not "" (an unknown key) nor the default tier.
func (c *tierCache) plan(tier string) bool {
	return tier != "" && tier != c.def
}

// storeLocked caches e under key in the map of its kind, dropping key
// from the other. c.mu is held.
func (c *tierCache) storeLocked(key [sha256.Size]byte, e tierEntry) {
	m, other := c.tiered, c.defaulted
	if !c.plan(e.tier) {
		m, other = c.defaulted, c.tiered
	}
	delete(other, key)
	if _, ok := m[key]; !ok && len(m) >= c.size {
		now := c.now()
		evictSampled(m, func(e tierEntry) bool { return !now.Before(e.expires) })
	}
	m[key] = e
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
	return len(c.tiered) + len(c.defaulted)
}
