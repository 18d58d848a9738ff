package redisstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// A limiter whose state lives in Redis, shared by every app node. The
// client comes from NewClient, which sets what the limiter's deadline
// needs (context timeouts on, no script retries). Not run: it needs a
// Redis server.
func Example() {
	rdb := redisstore.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	store, err := redisstore.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := core.NewLimiter(store,
		core.WithLimits(core.PerSecond(10).WithBurst(100), core.PerDay(10_000).WithName("day")),
		core.WithBreaker(core.BreakerConfig{}), // fail fast while Redis is down
	)
	if err != nil {
		log.Fatal(err)
	}
	res, _ := limiter.Allow(context.Background(), "203.0.113.7")
	fmt.Println(res.Allowed, res.Degraded)
}

// The same store over a Redis Cluster: every key of a client carries the
// client as its hash tag, so all its limits live in one slot.
func ExampleNewClusterClient() {
	rdb := redisstore.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"},
	})
	defer rdb.Close()
	store, err := redisstore.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	_ = core.MustNewLimiter(store, core.WithTiers(core.RecipeTiers()...))
}
