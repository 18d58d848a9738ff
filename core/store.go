package core

import "context"

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
