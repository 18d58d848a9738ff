package main

import (
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// A combo is one load shape: goroutines, and clients (keys) they spread
// over; keys == 1 is one hot key that every goroutine checks.
type combo struct {
	c, keys int
}

func (c combo) String() string {
	if c.keys == 1 {
		return fmt.Sprintf("c=%d, hot key", c.c)
	}
	return fmt.Sprintf("c=%d, %s keys", c.c, groupDigits(c.keys))
}

// A family is the contenders compared within each round of its cells,
// one cell per combo. Ratios are taken against baseline within a round.
type family struct {
	id, title, about string
	redis            bool
	postgres         bool // checks of some contenders go to PostgreSQL: its CPU is measured
	quota            quota
	contenders       []contender
	baseline         string
	combos           []combo
	sampleShift      uint
}

// The quotas of the throughput cells admit every check: each check is then
// a write, the expensive path of every algorithm, and no contender gets a
// cheap denied path the others do not. Redis cannot approach 10^6 checks/s
// on this machine; in memory, 10^9 per hour is never used up in a run.
var (
	redisQuota = quota{rate: 1_000_000, period: time.Second}
	memQuota   = quota{rate: 1_000_000_000, period: time.Hour}
)

// The load shapes. Every Redis family that compares with peers runs c = 1,
// 16, 64 and 256 over 10,000 keys plus a hot key at c = 64; families that
// compare our own paths run fewer; in memory, more goroutines than the two
// cores only add queueing, so c = 1 and 64 on both key sets.
var (
	redisCombos = []combo{{1, 10_000}, {16, 10_000}, {64, 10_000}, {256, 10_000}, {64, 1}}
	fewCombos   = []combo{{1, 10_000}, {64, 10_000}, {64, 1}}
	memCombos   = []combo{{1, 10_000}, {64, 10_000}, {1, 1}, {64, 1}}
	quickCombos = []combo{{16, 10_000}}
)

// families returns every family in report order.
func families() []*family {
	return []*family{
		{id: "ceiling", title: "Redis ceiling", redis: true, quota: redisQuota, baseline: "ceiling: EVALSHA return 1",
			about:      "The most checks/s any one-script-per-check limiter can reach here: EVALSHA of `return 1`, plain and through go-redis v9's AutoPipeliner.",
			contenders: []contender{ceiling(), ceilingAutoPipeline()},
			combos:     []combo{{1, 10_000}, {16, 10_000}, {64, 10_000}, {256, 10_000}}},
		{id: "gcra", title: "GCRA on Redis", redis: true, quota: redisQuota, baseline: "redis_rate",
			about:      "Our GCRA store (plain client and AutoPipeliner) against redis_rate and throttled's Redis store, both GCRA.",
			contenders: []contender{oursRedis(core.GCRA), oursBatched(core.GCRA), oursAutoPipeline(), redisRate(), throttledRedis(), ceiling()},
			combos:     redisCombos},
		{id: "fixed", title: "Fixed window on Redis", redis: true, quota: redisQuota, baseline: "ulule (redis)",
			about:      "Our fixed window (one take per round trip, and batched as redisstore.New builds it by default) against ulule/limiter's Redis store and sethvargo/go-redisstore (tokens per interval, refilled at interval ticks).",
			contenders: []contender{oursRedis(core.FixedWindow), oursBatched(core.FixedWindow), ululeRedis(), sethvargoRedis(), ceiling()},
			combos:     redisCombos},
		{id: "sliding", title: "Sliding window counter on Redis", redis: true, quota: redisQuota, baseline: "mennanov (redis)",
			about:      "Our sliding window counter (one take per round trip, and batched as redisstore.New builds it by default) against mennanov/limiters' SlidingWindowRedis and go-chi/httprate with httprate-redis.",
			contenders: []contender{oursRedis(core.SlidingWindow), oursBatched(core.SlidingWindow), mennanovRedis(), httprateRedis(), ceiling()},
			combos:     redisCombos},
		{id: "algorithms", title: "Our five algorithms on Redis", redis: true, quota: redisQuota, baseline: "ratelimit gcra",
			about: "Token bucket and sliding log (no peer of the same family is included) and the other algorithms, against our GCRA.",
			contenders: []contender{oursRedis(core.GCRA), oursRedis(core.TokenBucket), oursRedis(core.FixedWindow),
				oursRedis(core.SlidingWindow), oursRedis(core.SlidingLog)},
			combos: fewCombos},
		{id: "path-redis", title: "Our request path on Redis", redis: true, quota: redisQuota, baseline: "redisstore Take",
			about: "What the Limiter (tier, keys, 50 ms deadline) and the net/http middleware (headers, driven in-process as httptest does) add to a GCRA store call, one take per round trip; and both on the store as redisstore.New builds it by default (batched).",
			contenders: []contender{renamed(oursRedis(core.GCRA), "redisstore Take"),
				oursLimiter("Limiter.Allow (redis)", true, redisStoreOpener),
				oursMiddleware("ratelimithttp (redis)", true, redisStoreOpener),
				oursLimiter("Limiter.Allow (redis, batched default)", true, batchedStoreOpener),
				oursMiddleware("ratelimithttp (redis, batched default)", true, batchedStoreOpener)},
			combos: fewCombos},
		{id: "postgres", title: "PostgreSQL store beside Redis", redis: true, postgres: true, quota: redisQuota, baseline: "ratelimit gcra",
			about:      "Our PostgreSQL store (core/pgstore: one call of a PL/pgSQL function per check, asynchronous commit, the server's clock; a pool of at most 24 connections) against our Redis store, one take per round trip, on the same machine. DB CPU is every postgres process's CPU over the run, per check.",
			contenders: []contender{oursRedis(core.GCRA), oursPostgres(core.GCRA), oursPostgres(core.FixedWindow), oursPostgres(core.SlidingWindow)},
			combos:     []combo{{1, 10_000}, {16, 10_000}, {64, 10_000}, {64, 1}}},
		{id: "controls-redis", title: "Controls and lockouts on Redis", redis: true, quota: redisQuota, baseline: "no control",
			about:      "What limits as data cost a check (docs/runtime-limits.md): Limiter.Allow on the default (batched) Redis store for clients without any control, the same while another client has an override (the node's snapshot is then looked up), every client with an override, and a limit with a lockout (the joined take program, which counts denials).",
			contenders: controlled(true, batchedStoreOpener),
			combos:     fewCombos},
		{id: "controls-memory", title: "Controls and lockouts in memory", quota: memQuota, baseline: "no control", sampleShift: 3,
			about:      "The same four on the memory store, where the limiter's own work is most of a check.",
			contenders: controlled(false, memStoreOpener),
			combos:     []combo{{1, 10_000}, {64, 10_000}}},
		{id: "memory", title: "In memory", quota: memQuota, baseline: "ratelimit memstore", sampleShift: 3,
			about: "Our memory store, our Limiter and middleware on it, against in-process limiters.",
			contenders: []contender{oursMemstore(), oursLimiter("Limiter.Allow (memstore)", false, memStoreOpener),
				oursMiddleware("ratelimithttp (memstore)", false, memStoreOpener),
				xrate(), sethvargoMemory(), ululeMemory(), throttledMemory(), httprateLocal()},
			combos: memCombos},
	}
}

// hasCeiling reports whether the ceiling runs in f's rounds.
func (f *family) hasCeiling() bool {
	for _, c := range f.contenders {
		if c.name == ceiling().name {
			return true
		}
	}
	return false
}

// renamed is c under another name; its keys are still c's.
func renamed(c contender, name string) contender {
	c.keysLike, c.name = c.keysOf(), name
	return c
}

// accuracyContenders are checked for exactness: everything that keeps its
// state in Redis, where several app nodes share one limit (memory stores
// are per process: four nodes admit four quotas by design), and our GCRA
// as redisstore.New builds it by default, batched, whose takes of one node
// share pipelines.
func accuracyContenders() []contender {
	cs := []contender{}
	for alg := range core.SlidingLog + 1 {
		cs = append(cs, oursRedis(alg))
	}
	return append(cs, oursBatched(core.GCRA), redisRate(), throttledRedis(), ululeRedis(), sethvargoRedis(), mennanovRedis(), httprateRedis())
}

// footprintContenders are the accuracy contenders with keys of their own:
// a contender that writes another's keys (keysLike) leaves what it does.
func footprintContenders() []contender {
	var cs []contender
	for _, c := range accuracyContenders() {
		if c.keysLike == "" {
			cs = append(cs, c)
		}
	}
	return cs
}
