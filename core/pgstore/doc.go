// Package pgstore is the PostgreSQL [core.Store]: the limits of
// docs/algorithms.md, exact across every app node sharing one database,
// for services that have PostgreSQL and no Redis. Make one with [New] over
// a pgx pool; [Store.Take] is what a [core.Limiter] calls, and most
// callers need nothing else.
//
// One take is one round trip: one call of a PL/pgSQL function (schema.sql,
// created by [New] or by a migration, [SchemaSQL]) that locks the keys of
// the take, reads their rows, decides every limit, and writes them all or
// none, in one transaction. Concurrent takes of one client serialise on
// transaction-scoped advisory locks of its keys, taken in one order, so
// they never lose an update and never deadlock. Time comes from the
// database (clock_timestamp(), read once the keys are locked), never from
// the app, as Redis TIME does for core/redisstore; the arithmetic is
// core/memstore's, operation by operation, so the two stores give the
// same decisions to the microsecond (core/storetest's differential suite).
//
// Every row carries when it stops mattering (expire_at): a take reads an
// expired row as absent, and a sweep ([WithSweep], [Store.Sweep]) deletes
// expired rows in bounded batches, so an idle client's state does not live
// forever. docs/operations.md, "PostgreSQL", has sizing, vacuum and
// connection budget.
//
// A Store is a [core.Leaser]: it executes [core.Concurrency] limits, whose
// leases expire by the database's clock like any state.
//
// A Store is safe for concurrent use. It starts one goroutine, the sweep,
// which [Store.Close] stops; the pool is the caller's to close.
package pgstore
