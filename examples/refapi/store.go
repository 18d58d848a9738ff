package refapi

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// OpenStore returns the Redis store when REDIS_URL is set (every node of
// the API then shares the limits) and the memory store otherwise, with a
// description for the start-up log and a function that releases it.
func OpenStore(ctx context.Context) (core.Store, string, func() error, error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		s, err := memstore.New()
		return s, "memory store", func() error { return nil }, err
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// Safe settings for the limiter's 50 ms deadline: context timeouts on,
	// no retries of a script that may have run (a double charge).
	client := redisstore.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, "", nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	s, err := redisstore.New(client)
	if err != nil {
		_ = client.Close()
		return nil, "", nil, err
	}
	return s, "redis at " + opts.Addr, client.Close, nil
}
