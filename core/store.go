package core

import (
	"context"
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
	// (Allowed is then true). The caller guarantees len(keys) ==
	// len(limits) >= 1, cost >= 0 and valid limits ([Limit.Validate]); the
	// keys of one call share the hash tag of one client ([KeyBuilder]).
	Take(ctx context.Context, dst []Decision, keys []string, limits []Limit, cost int64) ([]Decision, error)
}

// NonBlocking is implemented by stores whose Take never waits on I/O, such
// as core/memstore. A [Limiter] gives their calls no deadline of its own
// ([WithTimeout]), which saves a timer per decision, and passes them keys
// built in a reused buffer, which saves their allocation: the keys of a
// call to a NonBlocking store are valid only until Take returns, so a
// store that keeps a key (a new entry of a map) must copy it
// (strings.Clone).
type NonBlocking interface {
	Store
	// NonBlocking marks the store; it does nothing.
	NonBlocking()
}

// Sharded is implemented by stores made of parts that fail independently,
// such as the masters of a Redis Cluster. A [Limiter] with a circuit
// breaker ([WithBreaker]) keeps one breaker per shard, so a dead master
// fails fast only for the clients whose keys it serves.
type Sharded interface {
	Store
	// Shard names the part of the store that serves key (a master's
	// address, say), or returns "" when it does not know. It is called
	// before every store call: it must be fast and must not wait on I/O.
	Shard(key string) string
}

// Clocked is implemented by stores whose clock can be injected for tests,
// such as core/memstore and core/redisstore with their WithClock options.
// The store owns time: a [Limiter] over a store whose Clock is not nil reads
// that clock for everything it times itself (the deny cache, the tier
// cache, the circuit breaker's open period), and its httplimit.Middleware for the
// epoch X-RateLimit-Reset, so that one fake clock given to the store moves
// the whole limiter. Otherwise they read time.Now.
//
// A store that wraps another (an instrumented store, say) should implement
// Clocked by returning the inner store's clock, or nil.
type Clocked interface {
	// Clock returns the store's injected clock, or nil when the store
	// reads the real time.
	Clock() func() time.Time
}

// TimeoutChecker is implemented by stores whose client settings bound the
// decision budget they can keep, such as core/redisstore on a Redis
// Cluster. [NewLimiter] calls CheckTimeout with its timeout ([WithTimeout])
// and fails with the error, so a budget the store cannot keep is a
// construction error, not a double charge at request time. A store that
// wraps another should forward it.
type TimeoutChecker interface {
	// CheckTimeout returns an error saying why the store cannot keep a
	// budget of d, or nil.
	CheckTimeout(d time.Duration) error
}

// An Unwrapper is a [Store] that wraps another (an instrumented store, a
// store that adds behaviour to another) and has the capabilities of what it
// wraps and no more: a wrapper that forwards [Leaser]'s methods to a store
// that is no Leaser is not one. [NewLimiter] walks the Unwrap chain, as
// http.ResponseController does, when it checks a capability.
type Unwrapper interface {
	// Unwrap returns the wrapped store.
	Unwrap() Store
}

// notLeaser returns the first store of the Unwrap chain of s ([Unwrapper])
// that is no [Leaser], or nil when every one is.
func notLeaser(s Store) Store {
	for s != nil {
		if _, ok := s.(Leaser); !ok {
			return s
		}
		u, wraps := s.(Unwrapper)
		if !wraps {
			return nil
		}
		s = u.Unwrap()
	}
	return nil
}

// clockFunc is a time source: a store's clock ([Clocked]) or time.Now.
type clockFunc func() time.Time

// storeClock returns the clock of s ([Clocked]), or time.Now.
func storeClock(s Store) clockFunc {
	if c, ok := s.(Clocked); ok {
		if now := c.Clock(); now != nil {
			return now
		}
	}
	return time.Now
}
