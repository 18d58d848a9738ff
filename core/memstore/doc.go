// Package memstore is the in-process [core.Store]: it keeps the state of
// every limit in memory, computes exactly the formulas of
// docs/algorithms.md (the same float operations, in the same order, as the
// Redis scripts of core/redisstore), and is bounded in memory.
//
// A [Store] is safe for concurrent use. It starts no goroutine and holds no
// other resource, so it needs no Close: an idle key is removed when it is
// next touched after its state is back to the default, or evicted when its
// shard is full (see [WithMaxKeys]).
//
// Keys are spread over shards, each with its own lock, by their hash tag
// (the bytes between the first '{' and the next '}', as in Redis Cluster),
// so all keys of one client, built by [core.KeyBuilder], share one shard and
// one Take locks one mutex.
//
// A Store is a [core.Leaser]: it executes [core.Concurrency] limits, whose
// leases expire by the store's clock ([WithClock]) like any state.
//
// A Store is a [core.ControlStore] too: it keeps the controls of each key
// prefix (overrides, blocks, exemptions) with the semantics of the Redis
// store's, in this process only, expiring them by its clock, and
// [Store.DeleteKeys] resets a client.
package memstore
