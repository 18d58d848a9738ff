package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// Our contenders: the store alone (the cost of the algorithm), the
// Limiter (tiers, keys, deadline), the net/http middleware (headers too),
// on Redis and on the memory store.

// algorithmBounds says how exact each of our algorithms is (accuracy cell).
var algorithmBounds = map[core.Algorithm]boundKind{
	core.GCRA: boundBucket, core.TokenBucket: boundBucket, core.FixedWindow: boundEpochWindows,
	core.SlidingWindow: boundSlidingCounter, core.SlidingLog: boundLog,
}

// oursRedis is redisstore.Store.Take with one limit of algorithm alg.
func oursRedis(alg core.Algorithm) contender {
	return contender{name: "ratelimit " + alg.String(), ours: true, redis: true, bound: algorithmBounds[alg],
		open: func(e env) (*instance, error) {
			client := e.oursClient()
			return openOursStore(e, client, alg, client.Close)
		}}
}

// oursAutoPipeline is oursRedis(GCRA) through go-redis's AutoPipeliner,
// which batches the EVALSHAs of concurrent goroutines into one write.
func oursAutoPipeline() contender {
	return contender{name: "ratelimit gcra, AutoPipeline", ours: true, redis: true, bound: boundBucket, keysLike: "ratelimit gcra",
		open: func(e env) (*instance, error) {
			client := e.oursClient()
			ap, err := client.AutoPipeline()
			if err != nil {
				_ = client.Close()
				return nil, err
			}
			return openOursStore(e, ap, core.GCRA, func() error { _ = ap.Close(); return client.Close() })
		}}
}

// oursBatched is oursRedis(alg) as redisstore.New builds it by default:
// concurrent takes of the node share pipelines (redisstore.WithBatching).
func oursBatched(alg core.Algorithm) contender {
	name := "ratelimit " + alg.String()
	return contender{name: name + ", batched (default)", ours: true, redis: true, bound: algorithmBounds[alg], keysLike: name,
		open: func(e env) (*instance, error) {
			client := e.oursClient()
			store, err := redisstore.New(client, redisstore.WithLogger(quietLogger))
			if err != nil {
				_ = client.Close()
				return nil, err
			}
			return storeInstance(e, store, alg, func() { _ = client.Close() })
		}}
}

// quietLogger drops redisstore.New's client warnings: the bench builds its
// clients on purpose, and the warnings would bury the progress output.
var quietLogger = slog.New(slog.DiscardHandler)

// openOursStore opens our store on s sending one take per round trip
// (WithoutBatching), as the family cells compare: the work of one check.
func openOursStore(e env, s redis.Scripter, alg core.Algorithm, closeFn func() error) (*instance, error) {
	store, err := redisstore.New(s, redisstore.WithLogger(quietLogger), redisstore.WithoutBatching())
	if err != nil {
		_ = closeFn()
		return nil, err
	}
	return storeInstance(e, store, alg, func() { _ = closeFn() })
}

// storeInstance drives store.Take directly, with the keys a KeyBuilder
// makes, built once: what the Limiter does per request minus its policy.
func storeInstance(e env, store core.Store, alg core.Algorithm, closeFn func()) (*instance, error) {
	kb, err := core.NewKeyBuilder(e.ns)
	if err != nil {
		return nil, err
	}
	limits := []core.Limit{e.q.limit(alg)}
	keys := make([][]string, e.keys)
	for i, id := range e.ids() {
		keys[i] = kb.AppendKeys(nil, id, limits)
	}
	return &instance{close: closeFn, newWorker: func() checkFunc {
		dst := make([]core.Decision, 0, 1)
		return func(ctx context.Context, k int) (bool, error) {
			var err error
			dst, err = store.Take(ctx, dst[:0], keys[k], limits, 1)
			if err != nil {
				return false, err
			}
			return dst[0].Allowed, nil
		}
	}}, nil
}

// oursMemstore is memstore.Store.Take.
func oursMemstore() contender {
	return contender{name: "ratelimit memstore", ours: true, open: func(e env) (*instance, error) {
		store, err := memstore.New()
		if err != nil {
			return nil, err
		}
		return storeInstance(e, store, core.GCRA, func() {})
	}}
}

// storeOpener makes the store a Limiter contender runs on, and its closer.
type storeOpener func(e env) (core.Store, func(), error)

// redisStoreOpener sends one take per round trip, as redisstore Take in
// the same family does: the cells then show what the Limiter and the
// middleware add to the same store work.
func redisStoreOpener(e env) (core.Store, func(), error) {
	return openRedisStore(e, redisstore.WithoutBatching())
}

// batchedStoreOpener is the store redisstore.New builds by default: what a
// user of the README's quick start runs.
func batchedStoreOpener(e env) (core.Store, func(), error) {
	return openRedisStore(e)
}

func openRedisStore(e env, opts ...redisstore.Option) (core.Store, func(), error) {
	client := e.oursClient()
	store, err := redisstore.New(client, append([]redisstore.Option{redisstore.WithLogger(quietLogger)}, opts...)...)
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	return store, func() { _ = client.Close() }, nil
}

func memStoreOpener(env) (core.Store, func(), error) {
	store, err := memstore.New()
	return store, func() {}, err
}

// newLimiter is a Limiter with the cell's quota as its one tier, defaults
// otherwise (50 ms deadline, fail open).
func newLimiter(e env, store core.Store) (*core.Limiter, error) {
	return core.NewLimiter(store, core.WithLimits(e.q.limit(core.GCRA)), core.WithPrefix(e.ns))
}

// gcraKeys names the contender whose keys a Limiter on Redis writes: the
// limiter's keys are the store's, one GCRA key per client.
func gcraKeys(redis bool) string {
	if redis {
		return "ratelimit gcra"
	}
	return ""
}

// oursLimiter is core.Limiter.Allow over the store open makes.
func oursLimiter(name string, redis bool, open storeOpener) contender {
	return contender{name: name, ours: true, redis: redis, bound: boundBucket, keysLike: gcraKeys(redis), open: func(e env) (*instance, error) {
		store, closeFn, err := open(e)
		if err != nil {
			return nil, err
		}
		l, err := newLimiter(e, store)
		if err != nil {
			closeFn()
			return nil, err
		}
		ids := e.ids()
		return &instance{close: closeFn, newWorker: func() checkFunc {
			return func(ctx context.Context, k int) (bool, error) {
				res, err := l.Allow(ctx, ids[k])
				if err == nil && res.Degraded {
					err = res.Err // failed open: not a decision
				}
				return res.Allowed, err
			}
		}}, nil
	}}
}

// oursMiddleware is ratelimithttp.New around a handler that does nothing,
// driven like httptest drives a handler: no sockets, one request per check
// from its own client address.
func oursMiddleware(name string, redis bool, open storeOpener) contender {
	return contender{name: name, ours: true, redis: redis, bound: boundBucket, keysLike: gcraKeys(redis), open: func(e env) (*instance, error) {
		store, closeFn, err := open(e)
		if err != nil {
			return nil, err
		}
		l, err := newLimiter(e, store)
		if err != nil {
			closeFn()
			return nil, err
		}
		h := ratelimithttp.New(l)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		addrs := clientAddrs(e.keys)
		return &instance{close: closeFn, newWorker: func() checkFunc {
			d := newHTTPDriver()
			return func(_ context.Context, k int) (bool, error) {
				return d.serve(h, addrs[k])
			}
		}}, nil
	}}
}

// controlled returns Limiter.Allow over the stores open makes, for clients
// without any control (the baseline, "no control"), while another client
// has an override, with an override for every client, and with a Lockout
// on the limit: what limits as data cost the hot path.
func controlled(redis bool, open storeOpener) []contender {
	return []contender{
		controlledLimiter("no control", redis, open, controlNone),
		controlledLimiter("another client overridden", redis, open, controlOther),
		controlledLimiter("every client overridden", redis, open, controlAll),
		controlledLimiter("limit with a lockout", redis, open, controlLockout),
	}
}

type controlMode int

const (
	controlNone controlMode = iota
	controlOther
	controlAll
	controlLockout
)

// controlledLimiter is oursLimiter with the controls of mode set before
// the run.
func controlledLimiter(name string, redis bool, open storeOpener, mode controlMode) contender {
	return contender{name: name, ours: true, redis: redis, bound: boundBucket, keysLike: gcraKeys(redis), open: func(e env) (*instance, error) {
		store, closeFn, err := open(e)
		if err != nil {
			return nil, err
		}
		l, err := controlledSetUp(e, store, mode)
		if err != nil {
			closeFn()
			return nil, err
		}
		ids := e.ids()
		return &instance{close: closeFn, newWorker: func() checkFunc {
			return func(ctx context.Context, k int) (bool, error) {
				res, err := l.Allow(ctx, ids[k])
				if err == nil && res.Degraded {
					err = res.Err
				}
				return res.Allowed, err
			}
		}}, nil
	}}
}

// controlledSetUp returns the limiter of a controlled contender, its
// controls set: overrides give the same numbers as the tier (the quota
// must still admit every check), under the limit's name.
func controlledSetUp(e env, store core.Store, mode controlMode) (*core.Limiter, error) {
	lim := e.q.limit(core.GCRA).WithName("quota")
	if mode == controlLockout {
		lim = lim.WithLockout(core.Lockout{After: 10, Within: time.Minute, For: time.Minute})
	}
	// Quiet: every override set would be logged, 10,000 lines a cell.
	quiet := core.WithObserver(core.NewSlogObserver(slog.New(slog.DiscardHandler)))
	l, err := core.NewLimiter(store, core.WithLimits(lim), core.WithPrefix(e.ns), quiet)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	override := core.Override{Limits: []core.Limit{lim.WithBurst(e.q.rate)}, Reason: "bench"}
	switch mode {
	case controlOther:
		err = l.SetOverride(ctx, "someone-else", override)
	case controlAll:
		for _, id := range e.ids() {
			if err = l.SetOverride(ctx, id, override); err != nil {
				break
			}
		}
	}
	return l, err
}
