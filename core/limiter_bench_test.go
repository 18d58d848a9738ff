package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// BenchmarkLimiterAllow is the whole decision path over the memory store:
// tier, keys, timeout, store, result, for a client that has state. Compare
// with memstore's BenchmarkTake for the limiter's own overhead.
func BenchmarkLimiterAllow(b *testing.B) {
	tests := []struct {
		name   string
		limits []core.Limit
	}{
		{"one limit", []core.Limit{core.PerSecond(1e6).WithName("s")}},
		{"two limits", []core.Limit{core.PerSecond(1e6).WithName("s"), core.PerDay(1e10).WithName("d")}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			l := benchLimiter(b, tt.limits...)
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := l.Allow(ctx, "203.0.113.7"); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func benchLimiter(b *testing.B, limits ...core.Limit) *core.Limiter {
	b.Helper()
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	return core.MustNewLimiter(store, core.WithLimits(limits...), core.WithTimeout(time.Second))
}
