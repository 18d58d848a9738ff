package memstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

var _ core.Leaser = (*Store)(nil)

// maxLeaseRetry is [core.ConcurrencyRetryAfter] in µs.
const maxLeaseRetry = int64(core.ConcurrencyRetryAfter / 1000)

// A leaseSet is the state of a [core.Concurrency] key: the expiry (µs) of
// every lease held, by lease id. A lease is live while now < its expiry,
// as on Redis, where the script drops the scores ≤ now.
type leaseSet map[string]int64

// prune drops the leases expired at now and returns the count left and the
// earliest and latest expiry among them (0 when none is left).
func (ls leaseSet) prune(now int64) (n, oldest, newest int64) {
	for id, exp := range ls {
		if exp <= now {
			delete(ls, id)
			continue
		}
		if n == 0 {
			oldest, newest = exp, exp
		}
		oldest, newest = min(oldest, exp), max(newest, exp)
		n++
	}
	return n, oldest, newest
}

// evalLeases evaluates the concurrency limit l over the lease state x (nil
// for a key without state) for a take of cost at now. It prunes the
// expired leases and tombstones, which changes no decision, and writes
// nothing else; an admitted take then adds its lease with [commitLease] in
// commit. Any cost above zero takes one lease, so it is never CostTooHigh.
func evalLeases(o *outcome, x *extState, l *core.Limit, now, cost int64) {
	var n, oldest, newest int64
	if x != nil {
		n, oldest, newest = x.leases.prune(now)
		x.tombs.prune(now)
	}
	ttl := periodMicros(l.Period)
	o.remainingBefore = l.Rate - n
	if n > 0 {
		o.resetBefore = newest - now
	}
	o.remainingAfter, o.resetAfter = o.remainingBefore, o.resetBefore
	switch {
	case cost == 0:
		o.allowed = true
	case n >= l.Rate:
		o.deny(min(oldest-now, maxLeaseRetry))
	default:
		reset := max(o.resetBefore, ttl)
		o.admit(l.Rate-n-1, reset, ttlMicros(reset))
	}
}

// TakeLease implements [core.Leaser]: [Store.Take] that, when admitted
// with a cost above zero, holds lease under the key of every Concurrency
// limit until [Store.Release], or until it expires by the store's clock.
func (s *Store) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	if lease == "" {
		return dst, errors.New("ratelimit: memstore: take lease: empty lease id")
	}
	return s.takeChecked(ctx, dst, keys, limits, cost, lease)
}

// Release implements [core.Leaser]: it drops lease from key, and the key
// with its last lease. A lease not held is no error; it leaves a tombstone
// for l.Period, as on Redis (scripts/lease.lua), so that a take of it
// that has not run yet holds nothing.
func (s *Store) Release(ctx context.Context, key string, l core.Limit, lease string) error {
	if l.Algorithm != core.Concurrency || l.Period < time.Microsecond {
		return fmt.Errorf("ratelimit: memstore: release: limit %q is not a valid Concurrency limit", l.EffectiveName())
	}
	sh := &s.shards[s.shardOf(key)]
	now := s.clock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.lookup(key, now)
	if e != nil && e.alg != core.Concurrency {
		return nil // the key holds another algorithm's state: no lease of it
	}
	if e != nil && e.ext != nil {
		if _, held := e.ext.leases[lease]; held {
			delete(e.ext.leases, lease)
			if len(e.ext.leases) == 0 && len(e.ext.tombs) == 0 {
				delete(sh.entries, key)
			}
			return nil
		}
	}
	if e == nil {
		e = sh.insert(key, now, nil)
		e.alg, e.expireAt = core.Concurrency, now
	}
	if e.ext == nil {
		e.ext = &extState{}
	}
	if e.ext.tombs == nil {
		e.ext.tombs = make(leaseSet, 1)
	}
	reset := periodMicros(l.Period)
	e.ext.tombs[strings.Clone(lease)] = now + reset
	for _, exp := range e.ext.leases { // as lease.lua's PEXPIRE: the newest lease, and the tombstone
		reset = max(reset, exp-now)
	}
	e.expireAt = now + ttlMicros(reset)
	return nil
}

// Renew implements [core.Leaser]: a lease of key still live at now
// expires l.Period from now; a lease that expired is not taken again.
func (s *Store) Renew(ctx context.Context, key string, l core.Limit, lease string) (bool, error) {
	if l.Algorithm != core.Concurrency || l.Period <= 0 {
		return false, fmt.Errorf("ratelimit: memstore: renew: limit %q is not a valid Concurrency limit", l.EffectiveName())
	}
	sh := &s.shards[s.shardOf(key)]
	now := s.clock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.lookup(key, now)
	if e == nil || e.alg != core.Concurrency || e.ext == nil {
		return false, nil
	}
	leases := e.ext.leases
	if exp, ok := leases[lease]; !ok || exp <= now {
		return false, nil
	}
	newest := now + periodMicros(l.Period)
	leases[lease] = newest
	for _, exp := range leases {
		newest = max(newest, exp)
	}
	e.expireAt = now + ttlMicros(newest-now) // as lease.lua's PEXPIRE
	return true, nil
}

// commitLease adds lease to the entry e of a Concurrency key, expiring
// ttl µs after now, unless a tombstone says it was released before this
// take ran: then it only drops the tombstone.
func commitLease(e *entry, lease string, now, ttl int64) {
	if e.alg != core.Concurrency || e.ext == nil || e.ext.leases == nil {
		tombs := leaseSet(nil)
		if e.alg == core.Concurrency && e.ext != nil {
			tombs = e.ext.tombs
		}
		e.ext = &extState{leases: make(leaseSet, 1), tombs: tombs}
	}
	if _, released := e.ext.tombs[lease]; released {
		delete(e.ext.tombs, lease)
		return
	}
	e.ext.leases[strings.Clone(lease)] = now + ttl
}

// lookup returns the live entry of key, or nil, for Release and Renew: an
// expired entry is removed and reported absent (takes reuse it instead,
// see [Store.commit]). The caller holds sh.mu.
func (sh *shard) lookup(key string, now int64) *entry {
	e := sh.entries[key]
	if e != nil && e.expired(now) {
		delete(sh.entries, key)
		return nil
	}
	return e
}
