package ratelimitprom_test

import (
	"context"
	"testing"

	"github.com/ratelimitkit/ratelimit/core"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

// BenchmarkDecided measures what the Collector adds to every request.
func BenchmarkDecided(b *testing.B) {
	metrics := ratelimitprom.MustNew()
	ctx := context.Background()
	res := core.NewResult(
		core.Decision{Allowed: true, Limit: core.PerSecond(10).WithName("per-second"), Remaining: 5},
		core.Decision{Allowed: true, Limit: core.PerDay(1000).WithName("daily"), Remaining: 500},
	)
	res.Tier = "free"
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			metrics.Decided(ctx, core.Request{Identity: "a", Cost: 1, Route: "/users/:id"}, res)
		}
	})
}
