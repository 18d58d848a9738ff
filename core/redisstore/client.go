package redisstore

import (
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"
)

// The decision budget, the timeout of one decision, is set in one place:
// [core.WithTimeout] (default [core.DefaultTimeout]). The limiter gives
// every store call a context with that deadline, and with
// ContextTimeoutEnabled go-redis v9 keeps every step of a call within it:
// the wait for a pooled connection (the pool selects on the context), a
// dial (the caller waits for the dial on its context), and each socket read
// and write (their deadline is the earlier of the context's deadline and
// the socket timeout). So the client settings below depend on no budget;
// the reasons are in docs/operations.md, "Timeouts and client settings".
//
//   - ContextTimeoutEnabled: go-redis ignores the context's deadline on
//     socket reads and writes without it; a frozen server would then hold a
//     decision for ReadTimeout, not the budget.
//   - MaxRetries -1 (no retries): a retried EVALSHA whose first attempt ran
//     but whose reply was lost charges the request twice; and a retry never
//     fits a 50 ms budget anyway. The NOSCRIPT fallback to EVAL is not a
//     retry (the store sends it) and keeps working.
//   - ReadTimeout, WriteTimeout, PoolTimeout and DialTimeout 500 ms
//     ([BackstopTimeout]), DialerRetries 1: backstops for what runs without
//     a deadline (cluster topology reloads, background dials of the warm
//     pool, the application's own commands), never reached by a decision
//     whose budget is shorter. Short, because a cluster reload asks nodes
//     one by one and waits ReadTimeout on a frozen one; at least the
//     budget, because a cluster client whose ReadTimeout is shorter could
//     resend a script that ran. A limiter whose timeout is longer fails at
//     construction ([Store.CheckTimeout]).
//   - MinIdleConns GOMAXPROCS when unset (a negative value is kept: no warm
//     pool): a burst does not spend its budgets dialing.
const (
	// BackstopTimeout is the socket, pool and dial timeout of the clients
	// [SafeOptions] and its siblings build: ten times [core.DefaultTimeout],
	// longer than any sane decision budget (which the context deadline
	// enforces), and short enough that a frozen node stalls background
	// work, such as a cluster topology reload, for at most half a second.
	BackstopTimeout = 500 * time.Millisecond
	// clusterReloadInterval bounds how stale a cluster client's slot map
	// gets without errors; errors reload it at once (see [Store.Take]).
	clusterReloadInterval = 10 * time.Second
)

// SafeOptions returns a copy of opt with the settings that keep every call
// of a [Store] within the limiter's timeout ([core.WithTimeout]), whatever
// it is up to [BackstopTimeout]: ContextTimeoutEnabled, no retries, [BackstopTimeout] socket, pool
// and dial timeouts, and a warm pool. Other fields (address, credentials,
// TLS, PoolSize) are kept. opt is not changed.
func SafeOptions(opt *redis.Options) *redis.Options {
	o := *opt
	safeFields{contextTimeout: &o.ContextTimeoutEnabled, maxRetries: &o.MaxRetries, dialerRetries: &o.DialerRetries,
		minIdle: &o.MinIdleConns, read: &o.ReadTimeout, write: &o.WriteTimeout, poolWait: &o.PoolTimeout,
		dial: &o.DialTimeout}.apply()
	return &o
}

// SafeClusterOptions is [SafeOptions] for a Redis Cluster client. It also
// turns off the retry backoff (MaxRedirects stays: a MOVED after a failover
// is redirected at once; a sleep before retrying a dead master only turns a
// fast failure into a timeout) and refreshes the slot map every 10 s
// instead of 60 s. A [Store] also refreshes it on every burst of errors, so
// a dead master is left as soon as its replica is promoted.
func SafeClusterOptions(opt *redis.ClusterOptions) *redis.ClusterOptions {
	o := *opt
	safeFields{contextTimeout: &o.ContextTimeoutEnabled, maxRetries: &o.MaxRetries, dialerRetries: &o.DialerRetries,
		minIdle: &o.MinIdleConns, read: &o.ReadTimeout, write: &o.WriteTimeout, poolWait: &o.PoolTimeout,
		dial: &o.DialTimeout}.apply()
	o.MinRetryBackoff, o.MaxRetryBackoff = -1, -1
	o.ClusterStateReloadInterval = clusterReloadInterval
	return &o
}

// SafeFailoverOptions is [SafeOptions] for a Sentinel failover client.
func SafeFailoverOptions(opt *redis.FailoverOptions) *redis.FailoverOptions {
	o := *opt
	safeFields{contextTimeout: &o.ContextTimeoutEnabled, maxRetries: &o.MaxRetries, dialerRetries: &o.DialerRetries,
		minIdle: &o.MinIdleConns, read: &o.ReadTimeout, write: &o.WriteTimeout, poolWait: &o.PoolTimeout,
		dial: &o.DialTimeout}.apply()
	return &o
}

// safeFields points at the fields that SafeOptions, SafeClusterOptions and
// SafeFailoverOptions set alike (go-redis has one options type per client).
type safeFields struct {
	contextTimeout                     *bool
	maxRetries, dialerRetries, minIdle *int
	read, write, poolWait, dial        *time.Duration
}

// apply sets the fields.
func (f safeFields) apply() {
	*f.contextTimeout = true
	*f.maxRetries = -1
	*f.read, *f.write, *f.poolWait = BackstopTimeout, BackstopTimeout, BackstopTimeout
	*f.dial, *f.dialerRetries = BackstopTimeout, 1
	if *f.minIdle == 0 {
		*f.minIdle = runtime.GOMAXPROCS(0)
	}
}

// NewClient is shorthand for redis.NewClient(SafeOptions(opt)).
func NewClient(opt *redis.Options) *redis.Client {
	return redis.NewClient(SafeOptions(opt))
}

// NewClusterClient is shorthand for
// redis.NewClusterClient(SafeClusterOptions(opt)).
func NewClusterClient(opt *redis.ClusterOptions) *redis.ClusterClient {
	return redis.NewClusterClient(SafeClusterOptions(opt))
}

// NewFailoverClient is shorthand for
// redis.NewFailoverClient(SafeFailoverOptions(opt)).
func NewFailoverClient(opt *redis.FailoverOptions) *redis.Client {
	return redis.NewFailoverClient(SafeFailoverOptions(opt))
}
