// Package redisstore is a [core.Store] on Redis: every take of one client,
// all its limits and algorithms together, is one atomic Lua script run with
// one EVALSHA.
//
// The scripts (scripts/*.lua, embedded) transcribe docs/algorithms.md
// operation by operation, like core/memstore, so both stores give the same
// decisions. Their KEYS, ARGV and reply are a contract, documented in
// docs/redis-protocol.md, so services in other languages can share the
// limits.
//
// Time comes from the Redis server (TIME), never from the application, so
// app nodes with skewed clocks agree; [WithClock] overrides it for tests
// only. Every key the script writes expires when its state is back to the
// default.
package redisstore
