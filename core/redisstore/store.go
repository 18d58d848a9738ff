package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// A Store executes limits on Redis. Each [Store.Take] is one script call,
// atomic on the server, so any number of app nodes can share a Store's
// keys. A Store is safe for concurrent use and holds no resources of its
// own (the client is the caller's to close).
type Store struct {
	client    redis.Scripter
	progs     programs
	now       func() time.Time // test clock; nil means the server's TIME
	appNow    func() time.Time // the app's clock, for calendar boundaries
	calendars calendarCache    // the boundaries of each calendar, per window
	boxes     boxes            // the limits' ARGV, boxed
	reload    *reloader        // nil unless client is a cluster client
	batch     batcher          // nil when takes go one by one ([WithoutBatching], a client with retries)

	masters    masterFinder // nil unless client is a cluster client
	slotsKnown atomic.Bool  // a take succeeded: masters answers from memory

	caps core.Capabilities // built once by New: no method value per call
}

var _ core.Store = (*Store)(nil)

// New returns a Store that runs its script through client: a
// *redis.Client, *redis.ClusterClient, *redis.Ring or a failover client.
// For Cluster, the keys of one take must share a hash tag, as the keys of a
// [core.KeyBuilder] do.
//
// Build the client with [NewClient], [NewClusterClient] or
// [NewFailoverClient] (or the Safe...Options functions), so that a slow or
// dead Redis costs a decision no more than its budget. New checks any
// other client with [CheckClient] and logs each problem once, as a warning
// ([WithLogger]); a risky client is still accepted. Concurrent takes share
// round trips unless [WithoutBatching] is given (described there).
func New(client redis.Scripter, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("ratelimit: redisstore: nil client")
	}
	c := config{logger: slog.Default()}
	for _, opt := range opts {
		opt(&c)
	}
	if c.batchOn && c.batchOff {
		return nil, errors.New("ratelimit: redisstore: WithBatching and WithoutBatching contradict each other")
	}
	progs, err := newPrograms(c.now != nil)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: redisstore: load scripts: %w", err)
	}
	for _, problem := range CheckClient(client, core.DefaultTimeout) {
		c.logger.Warn("ratelimit: redisstore: risky redis client setting", "problem", problem)
	}
	s := &Store{client: client, progs: progs, now: c.now, appNow: appClock(c)}
	if r, ok := client.(stateReloader); ok {
		s.reload = newReloader(r, reloadEvery, time.Now)
	}
	s.masters, _ = client.(masterFinder)
	s.batch = newBatcher(client, c)
	s.caps = s.capabilities()
	return s, nil
}

// Clock returns the clock of [WithClock], or nil when Redis reads its own
// (TIME). [Store.Capabilities] states it, so a [core.Limiter] over the
// store times its deny cache, tier cache and breaker with the test clock
// too.
func (s *Store) Clock() func() time.Time { return s.now }

// Take implements [core.Store]: one EVALSHA (EVAL when the server does not
// have the script cached, as after a restart or failover) that charges cost
// to every limit, or to none. A take of one limit runs the program of its
// algorithm, a take of several the program "take" ([Scripts]); each is
// loaded on first use. With [WithBatching], concurrent takes share
// pipelines.
//
// Errors are wrapped as "ratelimit: redis take: ...". Those that mean Redis
// cannot answer now (timeouts, refused or broken connections, an exhausted
// pool, CLUSTERDOWN, TRYAGAIN, LOADING, MASTERDOWN, READONLY, ...) also wrap
// [core.ErrStoreUnavailable], so a [core.Limiter] applies its failure mode;
// all others (script errors, WRONGTYPE, CROSSSLOT, invalid arguments) are
// bugs. On a cluster client, unavailable errors also refresh the slot map,
// at most every 100 ms, so takes leave a dead master as soon as a replica
// replaced it.
//
// A [core.Concurrency] limit needs [Store.TakeLease] for a cost above zero.
func (s *Store) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	return s.take(ctx, dst, keys, limits, cost, "")
}

// take is Take and TakeLease: lease is "" for Take.
func (s *Store) take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	if err := validateTake(keys, limits, cost, lease); err != nil {
		return dst, fmt.Errorf("ratelimit: redis take: %w", err)
	}
	p, cmd := s.call(ctx, keys, limits, cost, lease)
	reply, err := s.run(ctx, p, cmd)
	if err != nil {
		err = classify(err)
		if s.reload != nil && errors.Is(err, core.ErrStoreUnavailable) {
			s.reload.failed(ctx)
		}
		return dst, fmt.Errorf("ratelimit: redis take: %w", err)
	}
	if s.masters != nil && !s.slotsKnown.Load() {
		s.slotsKnown.Store(true)
	}
	dst, err = appendDecisions(dst, limits, reply)
	if err != nil {
		return dst, fmt.Errorf("ratelimit: redis take: %w", err)
	}
	return dst, nil
}
