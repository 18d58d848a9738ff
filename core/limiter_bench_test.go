package core_test

import (
	"context"
	"net/http"
	"net/http/httptest"
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

// BenchmarkMiddleware is the net/http path over the memory store: key
// function, limiter, headers; the handler writes nothing.
func BenchmarkMiddleware(b *testing.B) {
	l := benchLimiter(b, core.PerSecond(1e6).WithName("s"))
	mw, err := core.NewMiddleware(l)
	if err != nil {
		b.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		func(*http.Request) string { return "/" })
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{h: make(http.Header)}
		for pb.Next() {
			clear(w.h)
			h.ServeHTTP(w, r)
		}
	})
}

// discardWriter is a ResponseWriter that keeps nothing but its header map,
// so the benchmark measures the middleware, not a recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

func benchLimiter(b *testing.B, limits ...core.Limit) *core.Limiter {
	b.Helper()
	store, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	return core.MustNewLimiter(store, core.WithLimits(limits...), core.WithTimeout(time.Second))
}
