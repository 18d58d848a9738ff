package ratelimitchi_test

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	ratelimitchi "github.com/ratelimitkit/ratelimit/adapters/chi"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/internal/adaptertest"

	"github.com/stretchr/testify/assert"
)

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

func TestScenarios(t *testing.T) {
	adaptertest.Run(t, adaptertest.Router{
		New: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Use(ratelimitchi.New(l, opts...))
			r.Get("/hello", ok)
			r.Get("/users/{id}", ok)
			r.Get("/healthz", ok)
			return r
		},
		Finish: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Use(ratelimitchi.New(l, opts...))
			for path, h := range adaptertest.FinishRoutes {
				r.Get(path, h)
			}
			return r
		},
		PerRoute: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.With(ratelimitchi.New(l, opts...)).Get("/items/{id}", ok)
			return r
		},
		Twice: func(outer, inner *core.Limiter) http.Handler {
			r := chi.NewRouter()
			r.Use(ratelimitchi.New(outer))
			r.With(ratelimitchi.New(inner)).Get("/twice", adaptertest.TwiceHandler)
			return r
		},
		UsersRoute: "/users/{id}",
	})
}

// TestRoutePatternWhereverMounted proves each documented way of mounting
// the middleware reports the full route pattern of the request.
func TestRoutePatternWhereverMounted(t *testing.T) {
	type build = func(*core.Limiter, ...httplimit.Option) http.Handler
	tests := []struct {
		name, path, want string
		build            build
	}{
		{"r.Use at the top, nested r.Route", "/api/users/7", "/api/users/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Use(ratelimitchi.New(l, o...))
			r.Route("/api", func(r chi.Router) { r.Get("/users/{id}", ok) })
			return r
		}},
		{"r.Use inside r.Route", "/api/users/7", "/api/users/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Route("/api", func(r chi.Router) {
				r.Use(ratelimitchi.New(l, o...))
				r.Get("/users/{id}", ok)
			})
			return r
		}},
		{"r.Use inside r.Group", "/g/7", "/g/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Group(func(r chi.Router) {
				r.Use(ratelimitchi.New(l, o...))
				r.Get("/g/{id}", ok)
			})
			return r
		}},
		{"r.With on one route", "/w/7", "/w/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.With(ratelimitchi.New(l, o...)).Get("/w/{id}", ok)
			return r
		}},
		{"r.Use in a mounted sub-router", "/shop/items/7", "/shop/items/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			sub := chi.NewRouter()
			sub.Use(ratelimitchi.New(l, o...))
			sub.Get("/items/{id}", ok)
			r := chi.NewRouter()
			r.Mount("/shop", sub)
			return r
		}},
		{"wildcard route", "/files/a/b.txt", "/files/*", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Use(ratelimitchi.New(l, o...))
			r.Get("/files/*", ok)
			return r
		}},
		{"chi router under a net/http mux", "/chi/users/7", "/chi/users/{id}", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Use(ratelimitchi.New(l, o...))
			r.Get("/chi/users/{id}", ok)
			mux := http.NewServeMux()
			mux.Handle("/chi/", r)
			return mux
		}},
		{"unmatched route", "/nowhere", "", func(l *core.Limiter, o ...httplimit.Option) http.Handler {
			r := chi.NewRouter()
			r.Use(ratelimitchi.New(l, o...))
			r.Get("/users/{id}", ok)
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			adaptertest.CheckRoute(t, tt.build, tt.path, tt.want)
		})
	}
}

func TestNewPanicsOnBadConfig(t *testing.T) {
	assert.PanicsWithValue(t, "ratelimitchi.New: ratelimit: middleware: limiter must not be nil", func() { ratelimitchi.New(nil) })
}
