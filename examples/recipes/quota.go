package recipes

import "github.com/ratelimitkit/ratelimit/core"

// QuotaLimiter returns a limiter that holds each customer to 10 requests a
// second and 10,000 a day. Both limits are checked and charged in one
// store call, all or nothing: a request one limit denies costs the other
// nothing, so a client throttled per second does not burn its daily quota.
// opts are the application's own (observers, a failure mode).
func QuotaLimiter(store core.Store, opts ...core.Option) (*core.Limiter, error) {
	limits := core.WithLimits(
		core.PerSecond(10).WithName("per-second"),
		// A fixed window: "10,000 per calendar day (UTC)", as contracts
		// usually read, in one small key. For "10,000 in any 24 hours" use
		// core.SlidingLog, which keeps up to 10,000 entries per customer.
		core.PerDay(10_000).WithName("daily").WithAlgorithm(core.FixedWindow),
	)
	return core.NewLimiter(store, append([]core.Option{core.WithPrefix("rl:quota"), limits}, opts...)...)
}
