package core

import (
	"context"
	"sync"
	"time"
)

// denyCache remembers denied clients until their RetryAfter, so a client
// hammering while blocked costs no store call. This is exact for the node
// that saw the denial: a denied take changes no state, so until RetryAfter
// the store would deny a request of the same or higher cost again (other
// nodes can only push the moment further out, never closer).
//
// When a denial runs out, one request (the probe) asks the store; the
// others asking meanwhile wait for its answer instead of all asking at
// once, so a flood from one blocked client costs the store one call per
// RetryAfter per node, plus the calls it was admitted.
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
	probe chan struct{} // closed when the probe's answer is in; nil when none runs
}

func newDenyCache(size int) *denyCache {
	return &denyCache{size: size, entries: make(map[denyKey]denyEntry)}
}

// lookup returns the cached denial of k for a request of cost, with its
// durations shortened by the time passed since it was cached. On a miss
// after a denial ran out, the first caller gets a probe channel: it asks
// the store and must call [denyCache.release] with it; later callers wait
// for that answer and look again. A waiter whose ctx is done gets ctx's
// error: it has no decision.
func (c *denyCache) lookup(ctx context.Context, k denyKey, cost int64, now clockFunc) (res Result, hit bool, probe chan struct{}, err error) {
	for {
		c.mu.Lock()
		e, ok := c.entries[k]
		if !ok { // the common case: no clock read
			c.mu.Unlock()
			return Result{}, false, nil, nil
		}
		t := now()
		switch {
		case t.Before(e.until):
			c.mu.Unlock()
			if cost < e.cost {
				return Result{}, false, nil, nil
			}
			return e.res.aged(t.Sub(e.at)), true, nil, nil
		case e.probe == nil:
			e.probe = make(chan struct{})
			c.entries[k] = e
			c.mu.Unlock()
			return Result{}, false, e.probe, nil
		}
		c.mu.Unlock()
		select {
		case <-e.probe:
		case <-ctx.Done():
			return Result{}, false, nil, ctx.Err()
		}
	}
}

// release ends the probe of k and wakes the callers waiting for it. The
// caller has already stored a new denial with put, if there was one. When
// the probe was admitted but left no quota (exhausted), the next waiter
// probes in turn, so a blocked client's flood reaches the store one request
// at a time until one is denied again or quota is plentiful; otherwise k's
// entry goes.
func (c *denyCache) release(k denyKey, probe chan struct{}, exhausted bool) {
	c.mu.Lock()
	if e, ok := c.entries[k]; ok && e.probe == probe {
		if exhausted {
			e.probe = nil
			c.entries[k] = e
		} else {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
	close(probe)
}

// put caches a denied result whose binding decision waits RetryAfter.
// Results that waiting cannot change (cost too high) are not cached, nor
// are denials of a [Concurrency] limit: a lease released on any node
// admits the next request at once, so its RetryAfter is an estimate, and a
// cached denial would block a client whose requests already ended.
func (c *denyCache) put(k denyKey, cost int64, res Result, now time.Time) {
	b := res.Binding()
	if b.Reason != Exhausted || b.RetryAfter <= 0 || inFlightDenied(res.Decisions) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok && len(c.entries) >= c.size {
		c.evict(now)
	}
	c.entries[k] = denyEntry{until: now.Add(b.RetryAfter), cost: cost, at: now, res: res}
}

// inFlightDenied reports whether a Concurrency limit denied among ds.
func inFlightDenied(ds []Decision) bool {
	for _, d := range ds {
		if !d.Allowed && d.Limit.Algorithm.leased() {
			return true
		}
	}
	return false
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
