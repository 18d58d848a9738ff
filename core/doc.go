// Package core is the protocol-neutral engine of ratelimit: limits and
// tiers, the [Store] contract that executes them atomically, and the
// [Limiter] that turns a client's request into one store call and answers
// with a [Result]. It knows nothing of HTTP: the HTTP side (middleware,
// options, headers, problem+json) is core/httplimit, which the framework
// adapters (adapters/gin, adapters/echo, adapters/chi, adapters/nethttp)
// put in front of handlers. Any other front end (gRPC, a job queue) is
// built the same way, from the limiter's public seams.
//
// # Where to start
//
// Make a store, then a limiter over it, then ask it (the package example
// runs this on the memory store):
//
//	store, err := redisstore.New(redisstore.NewClient(&redis.Options{Addr: "localhost:6379"}))
//	// or, for one process only: store, err := memstore.New()
//	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerSecond(10).WithBurst(20)))
//	res, err := limiter.Allow(ctx, clientID)
//	if !res.Allowed { /* refuse; retry in res.Binding().RetryAfter */ }
//
// Most HTTP services use a framework adapter instead of calling the
// limiter: r.Use(ratelimitgin.New(limiter)), configured with the options
// of core/httplimit. Callers outside HTTP that should wait their turn
// rather than be refused (job workers, clients of someone else's API) use
// [Limiter.Wait], [Limiter.WaitN] or [Limiter.WaitTake]. A front end of
// your own takes with [Limiter.Take] and gives a lease back with
// [Limiter.Release]; to charge by outcome, it checks before the work
// ([Limiter.Check]) and charges after it ([Limiter.Charge]).
//
// # The parts
//
//   - A [Limit] is one quota: a rate per period ([PerSecond], [PerMinute],
//     [PerHour], [PerDay], [Every]), a burst, an [Algorithm]; calendar
//     quotas ([PerCalendarDay], [PerCalendarWeek], [PerCalendarMonth])
//     reset at local midnight, on Mondays, on the 1st; [Concurrent] limits
//     requests in flight, each admitted one holding a lease until
//     [Limiter.Release].
//   - A [Tier] is the limits a class of clients gets together ([WithTier],
//     [WithTiers], [RecipeTiers]); all of a tier's limits are checked and
//     charged in one atomic store call, all or nothing. A [TierResolver]
//     ([WithTierResolver]) finds a request's tier, cached.
//   - A [Store] keeps the state: core/memstore in process, core/redisstore
//     on Redis (standalone, Sentinel, Cluster), both passing the one
//     conformance suite, core/storetest.
//   - A [Limiter] is configured with [Option]s, the With* functions:
//     limits and tiers, key prefix, timeout, failure mode and fallback,
//     breaker, deny cache, observers (logs, metrics), shadow mode. It
//     answers with a [Result]: allowed or not, and one [Decision] per
//     limit, and tells its [Observer]s ([SlogObserver], the Prometheus
//     observer of metrics/prometheus).
//   - Controls act on one client, on every node sharing the store: an
//     override of its limits ([Limiter.SetOverride]), a block
//     ([Limiter.Block]), an exemption ([Limiter.Exempt]), a reset
//     ([Limiter.Reset]); [Controls] is the same without a limiter, for
//     tools. docs/controls.md covers them.
//
// # Production behaviour
//
// Every decision has a deadline ([WithTimeout], default [DefaultTimeout]).
// When the store fails, the [FailureMode] decides: admit (the default),
// refuse, or decide locally with a fallback store ([WithFallback]); a
// circuit breaker, on by default for stores that do I/O, stops waiting on
// a dead Redis. docs/operations.md covers deployment, metrics and
// incidents.
//
// # Tests
//
// Time comes from the store: give memstore.WithClock (or
// redisstore.WithClock) a fake clock, and the limiter, its caches and
// every front end reading [Limiter.Now] follow it ([Capabilities].Clock).
package core
