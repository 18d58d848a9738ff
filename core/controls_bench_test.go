package core_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// wrappedMemstore is the memory store behind one more method call, the
// baseline of the store below.
type wrappedMemstore struct{ *memstore.Store }

// memstoreWithControls is the memory store that takes, beside a store
// that keeps controls (until memstore keeps them itself).
type memstoreWithControls struct {
	*memstore.Store
	core.ControlStore
}

// BenchmarkLimiterAllowControls is BenchmarkLimiterAllow's one limit for
// clients with and without controls: what a client without any pays for a
// limiter over a store that keeps controls (a snapshot load), and what an
// overridden, exempt or blocked client pays.
func BenchmarkLimiterAllowControls(b *testing.B) {
	ctx := context.Background()
	limit := core.PerSecond(1e6).WithName("s")
	tests := []struct {
		name    string
		control func(l *core.Limiter) error
		keeps   bool
	}{
		{"no control store", nil, false},
		{"none set", nil, true},
		{"another client set", func(l *core.Limiter) error { return l.Block(ctx, "someone-else", time.Hour, "") }, true},
		{"override", func(l *core.Limiter) error {
			return l.SetOverride(ctx, "203.0.113.7", core.Override{Limits: []core.Limit{core.PerSecond(1e6).WithBurst(2e6).WithName("s")}})
		}, true},
		{"exempt", func(l *core.Limiter) error { return l.Exempt(ctx, "203.0.113.7", 0, "") }, true},
		{"blocked", func(l *core.Limiter) error { return l.Block(ctx, "203.0.113.7", time.Hour, "") }, true},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			l := benchControlLimiter(b, tt.keeps, limit)
			if tt.control != nil {
				if err := tt.control(l); err != nil {
					b.Fatal(err)
				}
			}
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

func benchControlLimiter(b testing.TB, keeps bool, limits ...core.Limit) *core.Limiter {
	b.Helper()
	logtest.CaptureDefault(b, slog.LevelWarn) // not the log of every control set
	mem, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	var store core.Store = wrappedMemstore{mem}
	if keeps {
		ctl := newControlStore(b, time.Now).(core.ControlStore)
		store = memstoreWithControls{Store: mem, ControlStore: ctl}
	}
	return core.MustNewLimiter(store, core.WithLimits(limits...), core.WithTimeout(time.Second))
}
