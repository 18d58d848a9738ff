// Package redisstore is a [core.Store] on Redis: every take of one client,
// all its limits and algorithms together, is one atomic Lua script run with
// one EVALSHA.
//
// The scripts (scripts/*.lua, embedded) transcribe docs/algorithms.md
// operation by operation, like core/memstore, so both stores give the same
// decisions. A take of one limit runs a lean program of its algorithm,
// which holds nothing else (Redis runs a script's whole text on every
// call); a take of several limits, or of one calendar or concurrency
// limit, runs the joined program "take". Both are built from one file per
// algorithm (docs/redis-protocol.md, "How the programs are built"). Their
// KEYS, ARGV and reply are a contract, documented in
// docs/redis-protocol.md, and [Scripts] (or `ratelimit script`) gives their
// exact text, so services in other languages can share the limits.
//
// Time comes from the Redis server (TIME), never from the application, so
// app nodes with skewed clocks agree; [WithClock] overrides it for tests
// only. Calendar quotas ([core.CalendarWindow]) need the time zone rules,
// which Lua lacks: the store sends the window boundaries around the app's
// clock and the server's TIME picks the window, so a skew smaller than two
// windows moves no boundary and a larger one is [ErrCalendarSkew]. Every
// key the script writes expires when its state is back to the default.
//
// A Store is a [core.Leaser]: a [core.Concurrency] limit is a sorted set of
// lease ids scored by their expiry, taken in the same script as the rate
// limits; [Store.Release] and [Store.Renew] are one call of the program
// "lease" (scripts/lease.lua) on the key's slot.
//
// A Store is a [core.ControlStore] too: the controls of a key prefix P
// (overrides, blocks, exemptions), their generation and change log live in
// five keys under P:{~ctl}, one Cluster slot, each with a TTL of
// [core.MaxControlAge], and every method but [Store.DeleteKeys] (one DEL)
// is one call of the program "control" (scripts/control.lua). A node that
// reads the changes every second costs Redis one small call per second
// when nothing changed (docs/redis-protocol.md, "Controls").
//
// # Failures
//
// A rate limiter must not become the outage. Build the go-redis client with
// [NewClient], [NewClusterClient] or [NewFailoverClient], which set what
// keeps a call within the limiter's deadline (ContextTimeoutEnabled, no
// retries that could charge a request twice, [BackstopTimeout] socket,
// pool and dial timeouts): the decision budget itself is set once, by
// core.WithTimeout, and reaches Redis as the context's deadline. [New] logs the settings of any other client that break it
// ([CheckClient]). [Store.Take] marks the errors that mean "Redis cannot
// answer now" with [core.ErrStoreUnavailable], so the limiter's breaker and
// failure mode handle them, and returns the others, bugs, as they are. On a
// Cluster it refreshes the slot map after failures, so a promoted replica
// serves a dead master's clients within a fraction of a second.
// docs/operations.md has the measured numbers.
//
// # Batching
//
// A Store coalesces concurrent takes of one Redis node (standalone,
// Sentinel, or each master of a Cluster) into pipelines without giving up
// any of the above: a lone take is sent as before, a take whose caller gave
// up is never sent, nothing that may have run is resent ([WithoutBatching]
// has the details). It is on by default for the clients [NewClient],
// [NewFailoverClient] and [NewClusterClient] build (no retries); a client
// with retries is used one take at a time. [WithoutBatching] turns it
// off. go-redis's own AutoPipeline is not safe for a rate limiter (it
// ignores callers' deadlines and, on a Cluster, resends a batch after a
// timeout): do not pass an
// *redis.AutoPipeliner as the client.
package redisstore
