package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// A Store executes limits on Redis. Each [Store.Take] is one script call,
// atomic on the server, so any number of app nodes can share a Store's
// keys. A Store is safe for concurrent use and holds no resources of its
// own (the client is the caller's to close).
type Store struct {
	client redis.Scripter
	script *redis.Script
	now    func() time.Time // test clock; nil means the server's TIME
}

var _ core.Store = (*Store)(nil)

// New returns a Store that runs its script through client: a
// *redis.Client, *redis.ClusterClient, *redis.Ring or a failover client.
// For Cluster, the keys of one take must share a hash tag, as the keys of a
// [core.KeyBuilder] do.
func New(client redis.Scripter, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("ratelimit: redisstore: nil client")
	}
	script, err := newScript()
	if err != nil {
		return nil, fmt.Errorf("ratelimit: redisstore: load scripts: %w", err)
	}
	s := &Store{client: client, script: script}
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// Take implements [core.Store]: one EVALSHA (EVAL when the server does not
// have the script cached) that charges cost to every limit, or to none.
// Errors, including invalid arguments, are wrapped as "ratelimit: redis
// take: ...".
func (s *Store) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	if err := checkTake(keys, limits, cost); err != nil {
		return dst, fmt.Errorf("ratelimit: redis take: %w", err)
	}
	reply, err := s.script.Run(ctx, s.client, keys, s.args(limits, cost)...).Slice()
	if err != nil {
		return dst, fmt.Errorf("ratelimit: redis take: %w", err)
	}
	dst, err = appendDecisions(dst, limits, reply)
	if err != nil {
		return dst, fmt.Errorf("ratelimit: redis take: %w", err)
	}
	return dst, nil
}
