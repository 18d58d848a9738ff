package core

import (
	"sync"
	"time"
)

// denyCache remembers denied clients until their RetryAfter, so a client
// hammering while blocked costs no store call. This is exact for the node
// that saw the denial: a denied take changes no state, so until RetryAfter
// the store would deny a request of the same or higher cost again (other
// nodes can only push the moment further out, never closer).
//
// It is bounded: when full, it drops expired entries among a sample, or else
// an arbitrary one (Go's map order), like [tierCache].
type denyCache struct {
	size int

	mu      sync.Mutex
	entries map[denyKey]denyEntry
}

type denyKey struct {
	identity string
	tier     string
}

type denyEntry struct {
	until time.Time // when the binding limit admits again
	cost  int64     // the denied cost: a cheaper request may pass sooner
	at    time.Time // when the result was cached
	res   Result
}

func newDenyCache(size int) *denyCache {
	return &denyCache{size: size, entries: make(map[denyKey]denyEntry)}
}

// get returns the cached denial of k for a request of cost, with its
// durations shortened by the time passed since it was cached.
func (c *denyCache) get(k denyKey, cost int64, now time.Time) (Result, bool) {
	c.mu.Lock()
	e, ok := c.entries[k]
	if ok && !now.Before(e.until) {
		delete(c.entries, k)
		ok = false
	}
	c.mu.Unlock()
	if !ok || cost < e.cost {
		return Result{}, false
	}
	return e.res.aged(now.Sub(e.at)), true
}

// put caches a denied result whose binding decision waits RetryAfter.
// Results that waiting cannot change (cost too high) are not cached.
func (c *denyCache) put(k denyKey, cost int64, res Result, now time.Time) {
	b := res.Binding()
	if b.Reason != Exhausted || b.RetryAfter <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.size {
		c.evict(now)
	}
	c.entries[k] = denyEntry{until: now.Add(b.RetryAfter), cost: cost, at: now, res: res}
}

func (c *denyCache) evict(now time.Time) {
	evictSampled(c.entries, func(e denyEntry) bool { return !now.Before(e.until) })
}

// aged returns r as it reads d later: every wait shortened by d.
func (r Result) aged(d time.Duration) Result {
	ds := make([]Decision, len(r.Decisions))
	for i, dec := range r.Decisions {
		dec.ResetAfter = max(0, dec.ResetAfter-d)
		if !dec.Allowed {
			dec.RetryAfter = max(time.Microsecond, dec.RetryAfter-d)
		}
		ds[i] = dec
	}
	r.Decisions = ds
	return r
}
