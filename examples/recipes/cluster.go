package recipes

import (
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// ClusterStore returns a store on the Redis Cluster that seeds (some of its
// nodes, "10.0.0.1:6379") belong to, and its client, for the caller to
// close at shutdown. The client fits any limiter timeout
// (core.WithTimeout) up to redisstore.BackstopTimeout.
func ClusterStore(seeds []string) (*redisstore.Store, *redis.ClusterClient, error) {
	// Context deadlines honoured, no retried (double-charged) scripts, no
	// backoff before a dead master, the slot map refreshed every 10 s. Do
	// not set ReadOnly or RouteByLatency: decisions are writes, on masters.
	client := redisstore.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
	store, err := redisstore.New(client)
	if err != nil {
		return nil, nil, errors.Join(err, client.Close())
	}
	return store, client, nil
}

// SentinelStore returns a store on the master that sentinels
// ("10.0.0.5:26379") know as master ("mymaster"), and its client. The
// client asks a sentinel for the master on every dial and follows
// +switch-master, so a failover needs no restart.
func SentinelStore(master string, sentinels []string) (*redisstore.Store, *redis.Client, error) {
	client := redisstore.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    master,
		SentinelAddrs: sentinels,
		// Password: the master's; SentinelPassword: the sentinels' own, if any.
	})
	store, err := redisstore.New(client)
	if err != nil {
		return nil, nil, errors.Join(err, client.Close())
	}
	return store, client, nil
}
