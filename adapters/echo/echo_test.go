package ratelimitecho_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratelimitecho "github.com/ratelimitkit/ratelimit/adapters/echo"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/internal/adaptertest"
)

func ok(c echo.Context) error { return c.String(http.StatusOK, "ok") }

func TestScenarios(t *testing.T) {
	adaptertest.Run(t, adaptertest.Router{
		New: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			e := echo.New()
			e.Use(ratelimitecho.New(l, opts...))
			e.GET("/hello", ok)
			e.GET("/users/:id", ok)
			e.GET("/healthz", ok)
			return e
		},
		Finish: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			e := echo.New()
			e.Use(ratelimitecho.New(l, opts...))
			for path, h := range adaptertest.FinishRoutes {
				e.GET(path, echo.WrapHandler(h))
			}
			return e
		},
		PerRoute: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			e := echo.New()
			e.GET("/items/:id", ok, ratelimitecho.New(l, opts...))
			return e
		},
		Twice: func(outer, inner *core.Limiter) http.Handler {
			e := echo.New()
			g := e.Group("", ratelimitecho.New(outer))
			g.GET("/twice", echo.WrapHandler(http.HandlerFunc(adaptertest.TwiceHandler)), ratelimitecho.New(inner))
			return e
		},
		UsersRoute:     "/users/:id",
		OwnErrorBodies: true,
	})
}

func newLimiter(t *testing.T, limits ...core.Limit) *core.Limiter {
	t.Helper()
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	require.NoError(t, err)
	l, err := core.NewLimiter(store, core.WithLimits(limits...))
	require.NoError(t, err)
	return l
}

func serve(h http.Handler, path string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.RemoteAddr = "192.0.2.9:1"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestDenialIsAnHTTPError checks that, without a deny handler, a denial
// reaches the app's HTTPErrorHandler as a 429 *echo.HTTPError, with the
// rate-limit fields already set.
func TestDenialIsAnHTTPError(t *testing.T) {
	e := echo.New()
	var got *echo.HTTPError
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		require.ErrorAs(t, err, &got)
		_ = c.JSON(got.Code, map[string]any{"error": got.Message})
	}
	e.Use(ratelimitecho.New(newLimiter(t, core.PerMinute(1).WithName("api"))))
	e.GET("/hello", ok)

	require.Equal(t, http.StatusOK, serve(e, "/hello").Code)
	w := serve(e, "/hello")

	require.NotNil(t, got)
	assert.Equal(t, http.StatusTooManyRequests, got.Code)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "60", w.Header().Get("Retry-After"))
	assert.Equal(t, `"api";r=0;t=60`, w.Header().Get("RateLimit"))
	var body map[string]string
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	assert.Equal(t, map[string]string{"error": "Too Many Requests"}, body)
}

// TestMounts checks the middleware per group and per route.
func TestMounts(t *testing.T) {
	e := echo.New()
	api := e.Group("/api", ratelimitecho.New(newLimiter(t, core.PerMinute(1))))
	api.GET("/a", ok)
	e.GET("/login", ok, ratelimitecho.New(newLimiter(t, core.PerMinute(1))))
	e.GET("/free", ok)

	tests := []struct {
		path string
		want int
	}{
		{"/api/a", http.StatusOK},
		{"/api/a", http.StatusTooManyRequests},
		{"/login", http.StatusOK},
		{"/login", http.StatusTooManyRequests},
		{"/free", http.StatusOK},
		{"/free", http.StatusOK},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, serve(e, tt.path).Code, tt.path)
	}
}

func TestNewPanicsOnBadConfig(t *testing.T) {
	assert.PanicsWithValue(t, "ratelimitecho.New: ratelimit: middleware: limiter must not be nil", func() { ratelimitecho.New(nil) })
}

// echo renders a handler's error after every middleware returned: the WithFinish func
// gets the status echo's error handler writes for it.
func TestFinishGetsTheStatusOfAHandlersError(t *testing.T) {
	var got []int
	store, err := memstore.New()
	require.NoError(t, err)
	l := core.MustNewLimiter(store, core.WithLimits(core.PerMinute(100)))
	e := echo.New()
	e.Use(ratelimitecho.New(l, httplimit.WithFinish(func(_ *http.Request, _ httplimit.Outcome, status int) { got = append(got, status) })))
	e.GET("/teapot", func(echo.Context) error { return echo.NewHTTPError(http.StatusTeapot) })
	e.GET("/bug", func(echo.Context) error { return errors.New("bug") })
	e.GET("/written", func(c echo.Context) error {
		_ = c.NoContent(http.StatusAccepted)
		return errors.New("after the response")
	})
	for _, path := range []string{"/teapot", "/bug", "/written"} {
		e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	assert.Equal(t, []int{http.StatusTeapot, http.StatusInternalServerError, http.StatusAccepted}, got)
}
