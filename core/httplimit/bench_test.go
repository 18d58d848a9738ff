package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// BenchmarkMiddleware is the net/http path over the memory store: key
// function, limiter, headers; the handler writes nothing.
func BenchmarkMiddleware(b *testing.B) {
	l := benchLimiter(b, core.PerSecond(1e6).WithName("s"))
	mw, err := httplimit.New(l)
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
