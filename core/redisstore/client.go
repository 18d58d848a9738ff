package redisstore

import (
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// A decision budget is the timeout of one decision ([core.WithTimeout],
// default [core.DefaultTimeout]): every store call of the decision must end
// within it. The client settings below make go-redis keep to it; the
// reasons are in docs/operations.md, "Timeouts and client settings".
//
//   - ContextTimeoutEnabled: go-redis ignores the context's deadline on
//     socket reads and writes without it; a frozen server would then hold a
//     decision for ReadTimeout (5 s by default), not the budget.
//   - MaxRetries -1 (no retries): a retried EVALSHA whose first attempt ran
//     but whose reply was lost charges the request twice; and a retry never
//     fits a 50 ms budget anyway. The NOSCRIPT fallback to EVAL is not a
//     retry (Script.Run does it) and keeps working.
//   - ReadTimeout and WriteTimeout twice the budget: the context deadline,
//     not the socket timeout, cuts a decision's read short, so the call ends
//     with the context's error and nothing resends it; these only bound
//     commands sent without a deadline (cluster topology reloads, the
//     application's own commands).
//   - PoolTimeout the budget: go-redis waits for a pooled connection no
//     longer than the context allows; this bounds waits without one.
//   - DialTimeout five times the budget, DialerRetries 1: requests dial
//     under their own deadline; background dials (the warm pool, topology
//     reloads) get a little longer, and a refused dial is not retried after
//     100 ms sleeps.
//   - MinIdleConns GOMAXPROCS when unset (a negative value is kept: no warm
//     pool): a burst does not spend its budgets dialing.
const (
	socketTimeoutFactor = 2
	dialTimeoutFactor   = 5
	// clusterReloadInterval bounds how stale a cluster client's slot map
	// gets without errors; errors reload it at once (see [Store.Take]).
	clusterReloadInterval = 10 * time.Second
)

// budgetOr returns budget, or [core.DefaultTimeout] when it is not positive.
func budgetOr(budget time.Duration) time.Duration {
	if budget <= 0 {
		return core.DefaultTimeout
	}
	return budget
}

// SafeOptions returns a copy of opt with the settings that keep every call
// of a [Store] within budget, the limiter's timeout ([core.WithTimeout]; 0
// means [core.DefaultTimeout]): ContextTimeoutEnabled, no retries, socket,
// pool and dial timeouts sized from the budget, and a warm pool. Other
// fields (address, credentials, TLS, PoolSize) are kept. opt is not changed.
func SafeOptions(opt *redis.Options, budget time.Duration) *redis.Options {
	o := *opt
	safeFields{contextTimeout: &o.ContextTimeoutEnabled, maxRetries: &o.MaxRetries, dialerRetries: &o.DialerRetries,
		minIdle: &o.MinIdleConns, read: &o.ReadTimeout, write: &o.WriteTimeout, poolWait: &o.PoolTimeout,
		dial: &o.DialTimeout}.apply(budget)
	return &o
}

// SafeClusterOptions is [SafeOptions] for a Redis Cluster client. It also
// turns off the retry backoff (MaxRedirects stays: a MOVED after a failover
// is redirected at once; a sleep before retrying a dead master only turns a
// fast failure into a timeout) and refreshes the slot map every 10 s
// instead of 60 s. A [Store] also refreshes it on every burst of errors, so
// a dead master is left as soon as its replica is promoted.
func SafeClusterOptions(opt *redis.ClusterOptions, budget time.Duration) *redis.ClusterOptions {
	o := *opt
	safeFields{contextTimeout: &o.ContextTimeoutEnabled, maxRetries: &o.MaxRetries, dialerRetries: &o.DialerRetries,
		minIdle: &o.MinIdleConns, read: &o.ReadTimeout, write: &o.WriteTimeout, poolWait: &o.PoolTimeout,
		dial: &o.DialTimeout}.apply(budget)
	o.MinRetryBackoff, o.MaxRetryBackoff = -1, -1
	o.ClusterStateReloadInterval = clusterReloadInterval
	return &o
}

// SafeFailoverOptions is [SafeOptions] for a Sentinel failover client.
func SafeFailoverOptions(opt *redis.FailoverOptions, budget time.Duration) *redis.FailoverOptions {
	o := *opt
	safeFields{contextTimeout: &o.ContextTimeoutEnabled, maxRetries: &o.MaxRetries, dialerRetries: &o.DialerRetries,
		minIdle: &o.MinIdleConns, read: &o.ReadTimeout, write: &o.WriteTimeout, poolWait: &o.PoolTimeout,
		dial: &o.DialTimeout}.apply(budget)
	return &o
}

// safeFields points at the fields that SafeOptions, SafeClusterOptions and
// SafeFailoverOptions set alike (go-redis has one options type per client).
type safeFields struct {
	contextTimeout                     *bool
	maxRetries, dialerRetries, minIdle *int
	read, write, poolWait, dial        *time.Duration
}

// apply sets the fields for budget (0 means [core.DefaultTimeout]).
func (f safeFields) apply(budget time.Duration) {
	budget = budgetOr(budget)
	*f.contextTimeout = true
	*f.maxRetries = -1
	*f.read, *f.write = socketTimeoutFactor*budget, socketTimeoutFactor*budget
	*f.poolWait = budget
	*f.dial, *f.dialerRetries = dialTimeoutFactor*budget, 1
	if *f.minIdle == 0 {
		*f.minIdle = runtime.GOMAXPROCS(0)
	}
}

// NewClient is shorthand for redis.NewClient(SafeOptions(opt, budget)).
func NewClient(opt *redis.Options, budget time.Duration) *redis.Client {
	return redis.NewClient(SafeOptions(opt, budget))
}

// NewClusterClient is shorthand for
// redis.NewClusterClient(SafeClusterOptions(opt, budget)).
func NewClusterClient(opt *redis.ClusterOptions, budget time.Duration) *redis.ClusterClient {
	return redis.NewClusterClient(SafeClusterOptions(opt, budget))
}

// NewFailoverClient is shorthand for
// redis.NewFailoverClient(SafeFailoverOptions(opt, budget)).
func NewFailoverClient(opt *redis.FailoverOptions, budget time.Duration) *redis.Client {
	return redis.NewFailoverClient(SafeFailoverOptions(opt, budget))
}
