package ratelimitprom_test

import (
	"context"
	"testing"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
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

// BenchmarkDecidedAndReleased measures what the Collector adds to a
// request that holds a lease: Decided and Released of one lease. The take
// and release themselves are timed apart, without the Collector, in
// BenchmarkLeaseWithoutCollector.
func BenchmarkDecidedAndReleased(b *testing.B) {
	metrics := ratelimitprom.MustNew()
	benchLease(b, metrics)
}

// BenchmarkLeaseWithoutCollector is the baseline of
// BenchmarkDecidedAndReleased: take and release over the memory store.
func BenchmarkLeaseWithoutCollector(b *testing.B) { benchLease(b, nil) }

func benchLease(b *testing.B, metrics *ratelimitprom.Collector) {
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	opts := []core.Option{core.WithTier("export", core.Concurrent(10_000).WithName("exports")), core.WithDefaultTier("export")}
	if metrics != nil {
		opts = append(opts, core.WithObserver(metrics))
	}
	l, err := core.NewLimiter(store, opts...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := l.Take(ctx, core.Request{Identity: "a", Cost: 1})
			if err != nil || res.Lease == nil {
				b.Fatal("no lease", err)
			}
			if err := l.Release(ctx, res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
