package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// BenchmarkLimiterAllow is the whole decision path over the memory store:
// tier, keys, timeout, store, result. Compare with memstore's
// BenchmarkTake for the limiter's own overhead.
func BenchmarkLimiterAllow(b *testing.B) {
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	l := core.MustNewLimiter(store, core.WithLimits(core.PerSecond(1e6).WithName("s"), core.PerDay(1e10).WithName("d")),
		core.WithTimeout(time.Second))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Allow(ctx, "203.0.113.7"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
