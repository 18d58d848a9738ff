package core

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"
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
// A client has one entry, of the tier it was last denied in: a denial
// answers a request of that tier, and also a request whose tier is not
// resolved yet ([denyCache.unresolved]), so that a denied client sending
// keys the tier resolver was never asked about costs the resolver a few
// calls, then one a second.
//
// It is bounded: when full, it drops expired entries among a sample, or else
// an arbitrary one (Go's map order), like [tierCache].
type denyCache struct {
	size int
	// held is len(entries), read without the lock: a cache that holds no
	// denial, the common case, costs a lookup one atomic load.
	held atomic.Int64

	mu      sync.Mutex
	entries map[string]*denyEntry // by safe identity
}

// A denyKey is a client (its safe identity) and the plan of its request:
// its tier, or the plan its override makes of it. A denial answers a
// request of the same plan only: [Limiter.SetTiers] replaces the plans, so
// a denial of the old tiers cached while they were replaced answers no
// request of the new, and one cached before an override ran out does not
// answer the requests after it.
type denyKey struct {
	identity string
	plan     *plan
}

type denyEntry struct {
	plan  *plan     // the tier of the denial
	until time.Time // when the binding limit admits again
	cost  int64     // the denied cost: a cheaper request may pass sooner
	at    time.Time // when the result was cached
	res   Result
	probe chan struct{} // closed when the probe's answer is in; nil when none runs
	// lookup is the hash of the denied request's tier lookup key (zero
	// when it named its tier); asked paces the requests of this client
	// with other lookup keys let through to the resolver, as a GCRA's
	// theoretical arrival time ([denyCache.unresolved]).
	lookup [sha256.Size]byte
	asked  time.Time
}

func newDenyCache(size int) *denyCache {
	return &denyCache{size: size, entries: make(map[string]*denyEntry)}
}

// empty reports whether the cache holds no denial: every lookup misses.
func (c *denyCache) empty() bool {
	return c.held.Load() == 0
}

// lookup reports whether k has a cached denial for a request of cost and,
// if so, sets res to it, with its durations shortened by the time passed
// since it was cached. On a miss after a denial ran out, the first caller
// gets a probe channel: it asks the store and must call
// [denyCache.release] with it; later callers wait for that answer and look
// again. A waiter whose ctx is done gets ctx's error: it has no decision.
func (c *denyCache) lookup(ctx context.Context, k denyKey, cost int64, now clockFunc, res *Result) (hit bool, probe chan struct{}, err error) {
	for {
		if c.held.Load() == 0 {
			return false, nil, nil
		}
		c.mu.Lock()
		e := c.entries[k.identity]
		if e == nil || e.plan != k.plan { // no clock read
			c.mu.Unlock()
			return false, nil, nil
		}
		t := now()
		switch {
		case t.Before(e.until):
			return c.answerUnlock(e, t, cost, res), nil, nil
		case e.probe == nil:
			e.probe = make(chan struct{})
			c.mu.Unlock()
			return false, e.probe, nil
		}
		wait := e.probe
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false, nil, ctx.Err()
		}
	}
}

// holds reports whether k has a cached denial for a request of cost that
// has not run out and, if so, sets res to it, aged as by lookup. It never
// probes or waits: it is for a check that charges nothing
// ([Limiter.check]), whose miss asks the store a peek.
func (c *denyCache) holds(k denyKey, cost int64, now clockFunc, res *Result) bool {
	if c.held.Load() == 0 {
		return false
	}
	c.mu.Lock()
	e := c.entries[k.identity]
	if e == nil || e.plan != k.plan {
		c.mu.Unlock()
		return false
	}
	return c.answerUnlock(e, now(), cost, res)
}

// unresolved answers a request of cost by the client id, whose tier is not
// known yet and whose lookup key hashes to key, from id's cached denial,
// without its tier: it returns the denial's plan and sets res as lookup
// does, or returns nil when the request must resolve its tier first. It
// must: when id has no denial that covers cost; when the denial ran out
// (the request then resolves its tier and probes, or waits for the probe
// running, as lookup); when key is the lookup key of the denied request
// (its cached tier expired: a plan change must reach it); and, for any
// other key, deniedLookupBurst keys at once, then one per every, so that
// a denied client presenting a key of another plan gets it (or, with
// [WithTierKeyIdentity], the real keys behind a denied address are their
// own clients), while one inventing keys costs the resolver a few calls and
// then one per every; and when the denial's tier is not one of ts, the
// tiers in force (they were replaced). A waiter whose ctx is done gets
// ctx's error.
func (c *denyCache) unresolved(ctx context.Context, ts *tierSet, id string, key [sha256.Size]byte, cost int64, now clockFunc, every time.Duration, res *Result) (*plan, error) {
	for c.held.Load() != 0 {
		c.mu.Lock()
		e := c.entries[id]
		if e == nil || cost > e.plan.fits || ts.plans[e.plan.name] != e.plan {
			c.mu.Unlock()
			return nil, nil
		}
		t := now()
		switch {
		case t.Before(e.until) && (key == e.lookup || e.asked.Sub(t) < deniedLookupBurst*every):
			e.asked = later(e.asked, t).Add(every)
			c.mu.Unlock()
			return nil, nil
		case t.Before(e.until):
			p := e.plan
			if c.answerUnlock(e, t, cost, res) {
				return p, nil
			}
			return nil, nil
		case e.probe == nil:
			c.mu.Unlock()
			return nil, nil
		}
		wait := e.probe
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, nil
}

// answerUnlock reports whether e, read at t, answers a request of cost:
// its denial has not run out and the request costs no less than the one
// denied (a cheaper one may pass sooner). If so it sets res to the denial,
// aged to t. c.mu is held; answerUnlock releases it.
func (c *denyCache) answerUnlock(e *denyEntry, t time.Time, cost int64, res *Result) bool {
	if !t.Before(e.until) || cost < e.cost {
		c.mu.Unlock()
		return false
	}
	*res = e.res
	c.mu.Unlock()
	res.age(t.Sub(e.at))
	return true
}

// release ends the probe of k and wakes the callers waiting for it. The
// caller has already stored a new denial with put, if there was one. When
// the probe was admitted but left no quota (exhausted), the next waiter
// probes in turn, so a blocked client's flood reaches the store one request
// at a time until one is denied again or quota is plentiful; otherwise k's
// entry goes.
func (c *denyCache) release(k denyKey, probe chan struct{}, exhausted bool) {
	c.mu.Lock()
	if e := c.entries[k.identity]; e != nil && e.probe == probe {
		if exhausted {
			e.probe = nil
		} else {
			delete(c.entries, k.identity)
			c.held.Store(int64(len(c.entries)))
		}
	}
	c.mu.Unlock()
	close(probe)
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// deniedLookupBurst is how many lookup keys without a cached answer a denied
// client may have resolved at once (then one per [deniedLookupEvery]): the
// real API keys of a few customers behind one denied address.
const deniedLookupBurst = 8

// put caches a denied result of the client id in the tier p (looked up by
// the key whose hash is lookup), whose binding
// decision waits RetryAfter, in place of any denial of id in another tier.
// Results that waiting cannot change (cost too high) are not cached, nor
// are denials of a [Concurrency] limit: a lease released on any node
// admits the next request at once, so its RetryAfter is an estimate, and a
// cached denial would block a client whose requests already ended.
//
// A lockout ([LockedOut]) is cached until it ends, for every cost: the
// store denies the client anything until then. A denial that a limit with
// a [Lockout] counted toward one is not cached: the next denial must reach
// the store to be counted too, or a client would be locked out after After
// denials per RetryAfter per node instead of After denials. That costs the
// store at most After calls per Within for a client hammering, before the
// lockout, which is cached, stops them.
func (c *denyCache) put(id string, p *plan, lookup [sha256.Size]byte, cost int64, res *Result, now time.Time) {
	b := res.binding()
	if b.Reason != Exhausted && b.Reason != LockedOut || b.RetryAfter <= 0 || res.inFlightDenied() || res.lockoutCounted() {
		return
	}
	if b.Reason == LockedOut {
		cost = 1 // a lockout denies every cost, a cheaper one too
	}
	e := &denyEntry{plan: p, until: now.Add(b.RetryAfter), cost: cost, at: now, res: *res, lookup: lookup, asked: now}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[id]; old != nil {
		e.asked = later(old.asked, now) // a new denial brings no new lookups
	}
	if c.entries[id] == nil && len(c.entries) >= c.size {
		c.evict(now)
	}
	c.entries[id] = e
	c.held.Store(int64(len(c.entries)))
}

// lockoutCounted reports whether a limit of r with a [Lockout] denied it
// for want of quota ([Exhausted]): the store counted the denial toward a
// lockout.
func (r *Result) lockoutCounted() bool {
	for i, l := range r.limits {
		if l.Lockout.After > 0 && r.verdict(i).reason == Exhausted {
			return true
		}
	}
	return false
}

// inFlightDenied reports whether a Concurrency limit denied r.
func (r *Result) inFlightDenied() bool {
	for i, l := range r.limits {
		if l.Algorithm.leased() && !r.verdict(i).allowed {
			return true
		}
	}
	return false
}

func (c *denyCache) evict(now time.Time) {
	evictSampled(c.entries, func(e *denyEntry) bool { return !now.Before(e.until) })
}

// age shortens every wait of r by d, as r reads d later. A Result of up
// to four limits holds its decisions inline, so this copies nothing to the
// heap; beyond that the verdicts get a new slice, as the cached one is
// shared.
func (r *Result) age(d time.Duration) {
	var vs []verdict
	if r.spill != nil {
		r.spill = append([]verdict(nil), r.spill...)
		vs = r.spill
	} else {
		vs = r.inline[:len(r.limits)]
	}
	for i := range vs {
		v := &vs[i]
		v.resetAfter = max(0, v.resetAfter-d)
		if !v.allowed {
			v.retryAfter = max(time.Microsecond, v.retryAfter-d)
		}
	}
}

// clear drops every cached denial: the tiers changed ([Limiter.SetTiers]).
// A probe running keeps its channel, which its caller closes as ever.
func (c *denyCache) clear() {
	c.mu.Lock()
	clear(c.entries)
	c.held.Store(0)
	c.mu.Unlock()
}

// forget drops the cached denial of the client id (a safe identity), if
// any: its limits changed, or an operator reset or unblocked it.
func (c *denyCache) forget(id string) {
	c.mu.Lock()
	delete(c.entries, id)
	c.held.Store(int64(len(c.entries)))
	c.mu.Unlock()
}
