package main

import (
	"context"
	"errors"
	"time"

	"github.com/go-chi/httprate"
	httprateredis "github.com/go-chi/httprate-redis"
	"github.com/go-redis/redis_rate/v10"
	redigo "github.com/gomodule/redigo/redis"
	"github.com/mennanov/limiters"
	sethredis "github.com/sethvargo/go-redisstore"
	"github.com/throttled/throttled/v2"
	throttledredis "github.com/throttled/throttled/v2/store/goredisstore.v9"
	ulule "github.com/ulule/limiter/v3"
	ululeredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// The Redis peers, each set up the way its README shows, with the cell's
// quota and a pool of one connection per goroutine.

// redisRate is go-redis/redis_rate: GCRA in one Lua script (EVALSHA).
func redisRate() contender {
	return contender{name: "redis_rate", redis: true, bound: boundBucket, open: func(e env) (*instance, error) {
		client := e.peerClient()
		l := redis_rate.NewLimiter(client)
		lim := redis_rate.Limit{Rate: int(e.q.rate), Burst: int(e.q.rate), Period: e.q.period}
		keys := e.nsIDs()
		return &instance{close: func() { _ = client.Close() }, newWorker: func() checkFunc {
			return func(ctx context.Context, k int) (bool, error) {
				res, err := l.Allow(ctx, keys[k], lim)
				if err != nil {
					return false, err
				}
				return res.Allowed > 0, nil
			}
		}}, nil
	}}
}

// throttledRedis is throttled's GCRA over its go-redis v9 store: a
// pipelined TIME + GET, then a compare-and-swap EVAL (the script text is
// sent every time), retried up to 10 times under contention.
func throttledRedis() contender {
	return contender{name: "throttled (redis)", redis: true, bound: boundBucket, open: func(e env) (*instance, error) {
		client := e.peerClient()
		st, err := throttledredis.NewCtx(client, e.ns+":")
		if err != nil {
			_ = client.Close()
			return nil, err
		}
		return throttledInstance(e, st, func() { _ = client.Close() })
	}}
}

// throttledInstance drives a GCRA limiter over st. Capacity is MaxBurst+1.
func throttledInstance(e env, st throttled.GCRAStoreCtx, closeFn func()) (*instance, error) {
	rl, err := throttled.NewGCRARateLimiterCtx(st, throttled.RateQuota{
		MaxRate: throttled.PerDuration(int(e.q.rate), e.q.period), MaxBurst: int(e.q.rate) - 1})
	if err != nil {
		closeFn()
		return nil, err
	}
	ids := e.ids()
	return &instance{close: closeFn, newWorker: func() checkFunc {
		return func(ctx context.Context, k int) (bool, error) {
			limited, _, err := rl.RateLimitCtx(ctx, ids[k], 1)
			return !limited && err == nil, err
		}
	}}, nil
}

// ululeRedis is ulule/limiter's Redis store: a fixed window (INCRBY and
// PEXPIRE in one EVALSHA) that starts with the client's first request.
func ululeRedis() contender {
	return contender{name: "ulule (redis)", redis: true, bound: boundFirstWindows, open: func(e env) (*instance, error) {
		client := e.peerClient()
		st, err := ululeredis.NewStoreWithOptions(client, ulule.StoreOptions{Prefix: e.ns, MaxRetry: 3})
		if err != nil {
			_ = client.Close()
			return nil, err
		}
		return ululeInstance(e, st, func() { _ = client.Close() }), nil
	}}
}

func ululeInstance(e env, st ulule.Store, closeFn func()) *instance {
	l := ulule.New(st, ulule.Rate{Period: e.q.period, Limit: e.q.rate})
	ids := e.ids()
	return &instance{close: closeFn, newWorker: func() checkFunc {
		return func(ctx context.Context, k int) (bool, error) {
			res, err := l.Get(ctx, ids[k])
			return err == nil && !res.Reached, err
		}
	}}
}

// sethvargoRedis is sethvargo/go-redisstore: tokens per interval that
// refill at interval ticks counted from the first request (the app's
// clock), one EVALSHA over a redigo pool.
func sethvargoRedis() contender {
	return contender{name: "sethvargo (redis)", redis: true, bound: boundFirstWindows, open: func(e env) (*instance, error) {
		o := e.srv.options()
		pool := &redigo.Pool{MaxIdle: e.pool, MaxActive: e.pool, Wait: true, IdleTimeout: 5 * time.Minute,
			Dial: func() (redigo.Conn, error) {
				return redigo.Dial("tcp", o.Addr, redigo.DialUsername(o.Username), redigo.DialPassword(o.Password),
					redigo.DialDatabase(o.DB))
			}}
		st, err := sethredis.NewWithPool(&sethredis.Config{Tokens: uint64(e.q.rate), Interval: e.q.period}, pool)
		if err != nil {
			_ = pool.Close()
			return nil, err
		}
		keys := e.nsIDs()
		return &instance{close: func() { _ = st.Close(context.Background()) }, newWorker: func() checkFunc {
			return func(ctx context.Context, k int) (bool, error) {
				_, _, _, ok, err := st.Take(ctx, keys[k])
				return ok, err
			}
		}}, nil
	}}
}

// mennanovRedis is mennanov/limiters' SlidingWindow over
// SlidingWindowRedis: INCR, PEXPIRE and GET in one pipeline (not atomic;
// denied requests are counted too). One limiter object per client, as the
// library is built.
func mennanovRedis() contender {
	return contender{name: "mennanov (redis)", redis: true, bound: boundSlidingCounter, open: func(e env) (*instance, error) {
		client := e.peerClient()
		clock := limiters.NewSystemClock()
		windows := make([]*limiters.SlidingWindow, e.keys)
		for i, key := range e.nsIDs() {
			windows[i] = limiters.NewSlidingWindow(e.q.rate, e.q.period, limiters.NewSlidingWindowRedis(client, key), clock, 1e-9)
		}
		return &instance{close: func() { _ = client.Close() }, newWorker: func() checkFunc {
			return func(ctx context.Context, k int) (bool, error) {
				_, err := windows[k].Limit(ctx)
				if errors.Is(err, limiters.ErrLimitExhausted) {
					return false, nil
				}
				return err == nil, err
			}
		}}, nil
	}}
}

// httprateRedis is go-chi/httprate with httprate-redis: a sliding window
// counter (MGET of two windows, then INCRBY + EXPIRE in MULTI), app clock.
// Its local fallback is off, so a Redis error shows as an error rather
// than as a local decision.
func httprateRedis() contender {
	return contender{name: "httprate-redis", redis: true, bound: boundSlidingCounter, open: func(e env) (*instance, error) {
		client := e.peerClient()
		counter := httprateredis.WithRedisLimitCounter(&httprateredis.Config{
			Client: client, PrefixKey: e.ns, WindowLength: e.q.period, FallbackDisabled: true})
		rl := httprate.NewRateLimiter(int(e.q.rate), e.q.period, counter, httprate.WithErrorHandler(recordHTTPError))
		return httprateInstance(e, rl, func() { _ = client.Close() }), nil
	}}
}
