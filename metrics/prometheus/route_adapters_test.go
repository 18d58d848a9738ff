package ratelimitprom_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratelimitchi "github.com/ratelimitkit/ratelimit/adapters/chi"
	ratelimitecho "github.com/ratelimitkit/ratelimit/adapters/echo"
	ratelimitgin "github.com/ratelimitkit/ratelimit/adapters/gin"
	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

func okHTTP(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

// routers are the four real routers, each serving GET /users/{id} (in its
// own syntax) behind its adapter, and the route template the adapter
// reports for it. everyRoute is set when the adapter is mounted for every
// route, so that it also sees unmatched requests.
var routers = []struct {
	name       string
	route      string
	everyRoute bool
	new        func(l *core.Limiter) http.Handler
}{
	{"gin", "/users/:id", true, func(l *core.Limiter) http.Handler {
		r := gin.New()
		r.Use(ratelimitgin.New(l))
		r.GET("/users/:id", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
		return r
	}},
	{"echo", "/users/:id", true, func(l *core.Limiter) http.Handler {
		e := echo.New()
		e.Use(ratelimitecho.New(l))
		e.GET("/users/:id", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
		return e
	}},
	{"chi", "/users/{id}", true, func(l *core.Limiter) http.Handler {
		r := chi.NewRouter()
		r.Use(ratelimitchi.New(l))
		r.Get("/users/{id}", okHTTP)
		return r
	}},
	{"net/http ServeMux, ratelimithttp.Handler", "GET /users/{id}", true, func(l *core.Limiter) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /users/{id}", okHTTP)
		return ratelimithttp.Handler(mux, l)
	}},
	{"net/http ServeMux, ratelimithttp.New on the route", "GET /users/{id}", false, func(l *core.Limiter) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /users/{id}", ratelimithttp.New(l)(http.HandlerFunc(okHTTP)))
		return mux
	}},
}

func TestRouteLabelIsTheAdaptersRouteTemplate(t *testing.T) {
	for _, rt := range routers {
		t.Run(rt.name, func(t *testing.T) {
			metrics := ratelimitprom.MustNew()
			h := rt.new(newRouteLimiter(t, metrics))

			for _, path := range []string{"/users/1", "/users/2", "/users/3"} {
				assert.NotEqual(t, http.StatusNotFound, serveRoute(h, path, "192.0.2.1:40000"), path)
			}
			assert.Equal(t, http.StatusNotFound, serveRoute(h, "/nope/1", "192.0.2.2:40000"))

			want := `
ratelimit_requests_total{limit="api",result="allowed",route="` + rt.route + `",tier="default"} 2
ratelimit_requests_total{limit="api",result="denied",route="` + rt.route + `",tier="default"} 1
`
			if rt.everyRoute { // an unmatched request has the route ""
				want = `
ratelimit_requests_total{limit="api",result="allowed",route="",tier="default"} 1` + want
			}
			assert.Equal(t, expect(requestsHeader+want), collectText(t, metrics, "ratelimit_requests_total"))
		})
	}
}

// serveRoute serves GET path from remote with h and returns the status.
func serveRoute(h http.Handler, path, remote string) int {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.RemoteAddr = remote
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// newRouteLimiter returns a limiter of 2 requests a minute per client,
// observed by metrics, on a memory store at a frozen instant.
func newRouteLimiter(t *testing.T, metrics *ratelimitprom.Collector) *core.Limiter {
	t.Helper()
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	require.NoError(t, err)
	l, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(2).WithName("api")), core.WithObserver(metrics))
	require.NoError(t, err)
	return l
}
