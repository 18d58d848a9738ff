package ratelimithttp_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/internal/adaptertest"
)

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", ok)
	mux.HandleFunc("GET /users/{id}", ok)
	mux.HandleFunc("GET /healthz", ok)
	return mux
}

func TestScenarios(t *testing.T) {
	adaptertest.Run(t, adaptertest.Router{
		New: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			return ratelimithttp.Handler(newMux(), l, opts...)
		},
		Finish: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			mux := http.NewServeMux()
			for path, h := range adaptertest.FinishRoutes {
				mux.Handle("GET "+path, h)
			}
			return ratelimithttp.New(l, opts...)(mux)
		},
		PerRoute: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /items/{id}", ratelimithttp.New(l, opts...)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })))
			return mux
		},
		Twice: func(outer, inner *core.Limiter) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /twice", ratelimithttp.New(inner)(http.HandlerFunc(adaptertest.TwiceHandler)))
			return ratelimithttp.New(outer)(mux)
		},
		UsersRoute: "GET /users/{id}",
	})
}

// TestRoutePattern checks the route each documented way of mounting
// reports: the pattern with Handler and per route, "" when New wraps the
// whole mux (the mux has not routed the request yet).
func TestRoutePattern(t *testing.T) {
	tests := []struct {
		name, path, want string
		build            func(*core.Limiter, ...httplimit.Option) http.Handler
	}{
		{"Handler around the mux", "/users/7", "GET /users/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			return ratelimithttp.Handler(newMux(), l, o...)
		}},
		{"New around one route", "/items/7", "/items/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("/items/{id}", ratelimithttp.New(l, o...)(http.HandlerFunc(ok)))
			return mux
		}},
		{"New around the whole mux sees no pattern", "/users/7", "", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			return ratelimithttp.New(l, o...)(newMux())
		}},
		{"Handler, unmatched route", "/nowhere", "", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			return ratelimithttp.Handler(newMux(), l, o...)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adaptertest.CheckRoute(t, tt.build, tt.path, tt.want)
		})
	}
}

func TestPanicsOnBadConfig(t *testing.T) {
	assert.PanicsWithValue(t, "ratelimithttp.New: ratelimit: middleware: limiter must not be nil", func() { ratelimithttp.New(nil) })
	assert.PanicsWithValue(t, "ratelimithttp.Handler: ratelimit: middleware: limiter must not be nil", func() { ratelimithttp.Handler(http.NewServeMux(), nil) })
}

// TestLimiterInsideTimeoutHandler proves the order documented with
// core.Concurrent: http.TimeoutHandler answers 503 at its timeout while
// the work goes on. With the limiter inside it (nearer the work), each
// running work keeps its lease and a third request under Concurrent(2) is
// denied; with the limiter outside it, the lease goes with the 503 and the
// third request runs beside two works still running.
func TestLimiterInsideTimeoutHandler(t *testing.T) {
	tests := []struct {
		name  string
		build func(limit func(http.Handler) http.Handler, work http.Handler) http.Handler
		want  int
	}{
		{"TimeoutHandler(limit(work)): the documented order", func(limit func(http.Handler) http.Handler, work http.Handler) http.Handler {
			return http.TimeoutHandler(limit(work), 10*time.Millisecond, "timeout")
		}, http.StatusTooManyRequests},
		{"limit(TimeoutHandler(work)): the lease goes at the timeout", func(limit func(http.Handler) http.Handler, work http.Handler) http.Handler {
			return limit(http.TimeoutHandler(work, 10*time.Millisecond, "timeout"))
		}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
			require.NoError(t, err)
			l, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(2).WithName("exports")))
			require.NoError(t, err)
			gate, started := make(chan struct{}), make(chan struct{}, 2)
			var works sync.WaitGroup
			work := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/export" { // ignores its context: the work goes on
					works.Add(1)
					defer works.Done()
					started <- struct{}{}
					<-gate
				}
				_, _ = w.Write([]byte("ok"))
			})
			h := tt.build(ratelimithttp.New(l), work)
			for range 2 {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/export", nil))
				require.Equal(t, http.StatusServiceUnavailable, w.Code, "the export timed out")
				<-started
			}

			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/status", nil))
			close(gate)
			works.Wait()

			assert.Equal(t, tt.want, w.Code, "a 3rd request while two exports run")
		})
	}
}
