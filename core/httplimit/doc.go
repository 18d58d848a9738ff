// Package httplimit is the HTTP side of ratelimit: the [Middleware] that
// every framework adapter (adapters/gin, adapters/echo, adapters/chi,
// adapters/nethttp) puts in front of handlers, its [Option]s, the
// rate-limit response fields ([SetHeaders], [HeaderFormat]), the
// problem+json bodies of denials and errors ([Problem], [DenyStatus],
// [ErrorStatus]) and the default key, the peer address
// ([RemoteAddrKey]). It is built from the public API of core's Limiter
// alone.
//
// # Where to start
//
// Make a core.Limiter, then hand it with options to your framework's
// adapter, which calls [New]:
//
//	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(60)))
//	r.Use(ratelimitgin.New(limiter,
//		httplimit.WithKey(keyfunc.Must(keyfunc.Header("X-API-Key"))), // who the client is
//		httplimit.WithHeaders(httplimit.HeadersIETF|httplimit.HeadersXRateLimit)))
//
// On net/http, ratelimithttp.New(limiter, opts...) wraps a handler, and
// [Middleware.Handler] does the same for any http.Handler router.
//
// # The options
//
//   - Who the client is: [WithKey] (default [RemoteAddrKey]; the keyfunc
//     package has proxy-aware addresses, API keys, composites), per route
//     with [WithRouteScope].
//   - Its tier: [WithTier] names it, [WithTierKey] gives the limiter's
//     tier resolver the raw lookup key.
//   - What a request costs: [WithCost], [WithCostFunc]; charged only by
//     outcome with [WithChargeIf] ([FailedRequests], [SuccessfulRequests]).
//   - Which requests pass untouched: [WithSkip].
//   - What the response says: [WithHeaders], [WithDenyHandler],
//     [WithErrorHandler]; work after the handler with the final status:
//     [WithFinish].
//
// # For adapter authors
//
// An adapter calls [Middleware.Serve] once per request with the route
// template, how to run the rest of its chain and how to read the
// response's status, and stops the chain when the [Outcome] is not
// Allowed ([Middleware.Deny], or the framework's own rendering when
// [Middleware.Custom] says the user gave no handler). Serve decides, runs
// the handler with the [Outcome] in its context ([OutcomeFromContext])
// and does the work after it, also when it panics: the release of a
// core.Concurrent lease (renewed while the handler runs), the charge of
// WithChargeIf, the WithFinish func.
package httplimit
