// Package ratelimitprom exports the decisions, requests in flight, store
// latency and circuit breaker state of a [core.Limiter] as Prometheus
// metrics. It is optional:
// the core imports no metrics library.
//
// A [Collector] is both a [core.Observer] (give it to the limiter with
// [core.WithObserver]) and a [prometheus.Collector] (register it yourself):
//
//	metrics := ratelimitprom.MustNew()
//	reg := prometheus.NewRegistry() // or prometheus.DefaultRegisterer
//	reg.MustRegister(metrics)
//	limiter, err := core.NewLimiter(metrics.InstrumentStore(store),
//		core.WithLimits(core.PerSecond(10)),
//		core.WithObserver(metrics))
//
// and serve reg with promhttp.HandlerFor. [New] is the variant that returns
// an invalid option as an error; [MustNew] panics on one.
//
// The metrics (docs/operations.md, "Metrics reference"):
//
//	ratelimit_requests_total{tier, limit, route, result}  counter
//	ratelimit_store_duration_seconds{result}             histogram
//	ratelimit_breaker_state                              gauge (0 closed, 1 open, 2 half-open)
//	ratelimit_breaker_transitions_total{from, to}        counter
//	ratelimit_in_flight{tier, limit}                     gauge (leases this process holds)
//
// The route label is [core.Request].Route: the route template the
// framework adapter matched ("/users/:id" for gin and echo, "/users/{id}"
// for chi, "GET /users/{id}" for http.ServeMux), or whatever a caller of
// [core.Limiter.Take] puts there; "" when no route matched. Label values
// are bounded: tiers and limit names come from the limiter's
// configuration, and at most [DefaultMaxRoutes] distinct routes
// ([WithMaxRoutes]) get a label of their own.
//
// ratelimit_in_flight counts, per [core.Concurrency] limit, the requests
// this process admitted with a lease and has not released yet
// ([core.Limiter.Release]; the middleware releases after the handler, also
// when it panics). It is this node's view, not the store's: the store
// counts the leases of every node, and a lease whose release failed stays
// there until its TTL, but leaves this gauge at once. A denial by a
// concurrency limit is counted in ratelimit_requests_total, result
// "denied", with the limit's name.
package ratelimitprom
