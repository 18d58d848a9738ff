package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// masterFinder is the part of *redis.ClusterClient that maps a key to the
// master serving its slot.
type masterFinder interface {
	MasterForKey(ctx context.Context, key string) (*redis.Client, error)
}

// Shard is the Shard of the store's [core.Capabilities]. On a cluster
// client it names the master
// that serves key (its address), so that a [core.Limiter] keeps one circuit
// breaker per master: a dead master fails fast for the clients of its
// slots only, and when a replica takes over, its address is a new shard
// with a closed breaker.
//
// It returns "" (one breaker for all keys) for other clients, and on a
// cluster client until a take succeeded: before the client knows the
// cluster's slots, looking them up would wait on the network. After that
// the lookup reads the client's slot map, which go-redis refreshes in the
// background.
func (s *Store) Shard(key string) string {
	if s.masters == nil || !s.slotsKnown.Load() {
		return ""
	}
	master, err := s.masters.MasterForKey(context.Background(), key)
	if err != nil {
		return ""
	}
	return master.Options().Addr
}
