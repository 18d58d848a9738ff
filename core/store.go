package core

import (
	"context"
	"fmt"
	"time"
)

// A Store executes the limits of one client atomically. Implementations
// must be safe for concurrent use; core/memstore and core/redisstore are the
// two shipped ones, and core/storetest checks any implementation against
// the shared semantics of docs/algorithms.md.
type Store interface {
	// Take charges cost to every limit, limits[i] being stored under
	// keys[i], and appends one Decision per limit to dst, in order. The
	// caller may reuse dst once Take returns: a store must not keep it.
	//
	// Take is all-or-nothing: if any limit denies, no limit is charged.
	// A cost of zero is a peek: it charges nothing and reports the state
	// (Allowed is then true, unless a [Lockout] holds the client). The
	// caller guarantees len(keys) == len(limits) >= 1, cost >= 0 and valid
	// limits ([Limit.Validate]); the keys of one call share the hash tag of
	// one client ([KeyBuilder]).
	//
	// A limit with a [Lockout] counts its denials in the same call, as its
	// documentation says, and keeps that state under a key of its own that
	// the store derives from the limit's key: the algorithm tag replaced by
	// "x" (<prefix>:{<identity>}:<limit name>:x), in the same hash tag.
	// While the client is locked out, that limit's decision is [LockedOut]
	// and the other limits report their peek.
	Take(ctx context.Context, dst []Decision, keys []string, limits []Limit, cost int64) ([]Decision, error)
}

// Capabilities says what a [Store] can do besides Take, in one place. A
// store states them with a Capabilities method ([Capable]); [NewLimiter]
// reads them once, with [CapabilitiesOf], and they must not change
// afterwards. The zero value describes a plain store: its Take may wait on
// I/O, it is one part, it reads the real time, it keeps any decision
// budget and it holds no leases.
//
// A store that wraps another (an instrumented store, a store that adds
// behaviour to another) returns the capabilities of what it wraps,
// CapabilitiesOf(inner), changed only where it really differs: it then has
// exactly those capabilities by construction, and needs no type per
// combination of them. A wrapper that may wrap a store holding leases
// also implements [Leaser] by forwarding; it holds leases only when what it
// wraps does, as Leases then says.
type Capabilities struct {
	// NonBlocking says that Take never waits on I/O, as in core/memstore.
	// A [Limiter] gives the calls of such a store no deadline of its own
	// ([WithTimeout]), which saves a timer per decision, and passes them
	// keys built in a reused buffer, which saves their allocation: the
	// keys of a call to a NonBlocking store are valid only until Take
	// returns, so a store that keeps a key (a new entry of a map) must
	// copy it (strings.Clone).
	NonBlocking bool
	// Shard, when not nil, names the part of the store that serves key
	// (a Redis Cluster master's address, say), or returns "" when it does
	// not know, for a store made of parts that fail independently. A
	// [Limiter] with a circuit breaker ([WithBreaker]) keeps one breaker
	// per shard, so a dead master fails fast only for the clients whose
	// keys it serves. It is called before every store call: it must be
	// fast and must not wait on I/O.
	Shard func(key string) string
	// Clock, when not nil, is the store's injected clock, as the WithClock
	// options of core/memstore and core/redisstore give it for tests. The
	// store owns time: a [Limiter] over a store with a Clock reads it for
	// everything it times itself (the deny cache, the tier cache, the
	// circuit breaker's open period), and the front ends that read
	// [Limiter.Now] (the epoch X-RateLimit-Reset of core/httplimit), so
	// that one fake clock given to the store moves the whole limiter.
	// Otherwise they read time.Now.
	Clock func() time.Time
	// CheckTimeout, when not nil, returns an error saying why the store
	// cannot keep a decision budget of d, or nil; core/redisstore on a
	// Redis Cluster has one. [NewLimiter] calls it with its timeout
	// ([WithTimeout]) and fails with the error, so a budget the store
	// cannot keep is a construction error, not a double charge at request
	// time.
	CheckTimeout func(d time.Duration) error
	// Leases says that the store executes [Concurrency] limits: it
	// implements [Leaser], as core/memstore and core/redisstore do.
	Leases bool
	// Lockouts says that the store counts the denials of a limit with a
	// [Lockout] in its takes and locks the client out, as core/memstore
	// and core/redisstore do. [NewLimiter], [Limiter.SetTiers] and
	// [Limiter.SetOverride] refuse a limit with a Lockout over a store (or
	// fallback store) without it, which would never lock anyone out.
	Lockouts bool
}

// A Capable store states its [Capabilities]. A [Store] that is not one
// has none: the zero Capabilities.
type Capable interface {
	// Capabilities returns what the store can do besides Take.
	Capabilities() Capabilities
}

// CapabilitiesOf returns the capabilities s states ([Capable]), or the
// zero Capabilities when it states none.
func CapabilitiesOf(s Store) Capabilities {
	if c, ok := s.(Capable); ok {
		return c.Capabilities()
	}
	return Capabilities{}
}

// leaserOf returns s as a [Leaser] when it holds leases
// ([Capabilities].Leases and the methods), else why not.
func leaserOf(s Store) (Leaser, error) {
	ls, methods := s.(Leaser)
	switch leases := CapabilitiesOf(s).Leases; {
	case !leases:
		return nil, fmt.Errorf("%T does not implement core.Leaser (its Capabilities do not state Leases)", s)
	case !methods:
		return nil, fmt.Errorf("%T does not implement core.Leaser (its Capabilities state Leases, but it lacks Leaser's methods)", s)
	}
	return ls, nil
}

// checkLockouts reports a limit with a [Lockout] among limits (of the tier
// tier) when s does not count lockouts ([Capabilities].Lockouts); role
// names s in the error.
func checkLockouts(s Store, role, tier string, limits []Limit) error {
	if s == nil || CapabilitiesOf(s).Lockouts {
		return nil
	}
	for _, l := range limits {
		if l.Lockout != (Lockout{}) {
			return fmt.Errorf("ratelimit: tier %q: limit %q has a Lockout, but the %s (%T) does not count lockouts (its Capabilities do not state Lockouts)",
				tier, l.EffectiveName(), role, s)
		}
	}
	return nil
}

// clockFunc is a time source: a store's clock ([Capabilities].Clock) or
// time.Now.
type clockFunc func() time.Time

// clockOf returns the clock of c, or time.Now.
func clockOf(c Capabilities) clockFunc {
	if c.Clock != nil {
		return c.Clock
	}
	return time.Now
}
