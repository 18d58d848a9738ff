package recipes_test

import (
	"log"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/examples/recipes"
)

// The limiter over a Cluster store keeps one circuit breaker per master:
// when one dies, only the clients of its slots fail (open, here) until its
// replica takes over. Not run: it needs a Redis Cluster.
func ExampleClusterStore() {
	store, client, err := recipes.ClusterStore([]string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	_ = core.MustNewLimiter(store, core.WithTimeout(core.DefaultTimeout), // the one place for the budget
		core.WithLimits(core.PerSecond(10).WithBurst(100).WithName("api")))
}

// The same over Sentinel: one master, so one breaker. Not run: it needs
// Redis Sentinel.
func ExampleSentinelStore() {
	store, client, err := recipes.SentinelStore("mymaster", []string{"10.0.0.5:26379", "10.0.0.6:26379", "10.0.0.7:26379"})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	_ = core.MustNewLimiter(store, core.WithLimits(core.PerSecond(10).WithBurst(100).WithName("api")))
}
