package ratelimitgin_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratelimitgin "github.com/ratelimitkit/ratelimit/adapters/gin"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/internal/adaptertest"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

func ok(c *gin.Context) { c.String(http.StatusOK, "ok") }

func TestScenarios(t *testing.T) {
	adaptertest.Run(t, adaptertest.Router{
		New: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			r := gin.New()
			r.Use(ratelimitgin.New(l, opts...))
			r.GET("/hello", ok)
			r.GET("/users/:id", ok)
			r.GET("/healthz", ok)
			return r
		},
		PerRoute: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			r := gin.New()
			r.GET("/items/:id", ratelimitgin.New(l, opts...), ok)
			return r
		},
		Finish: func(l *core.Limiter, opts ...httplimit.Option) http.Handler {
			r := gin.New()
			r.Use(ratelimitgin.New(l, opts...))
			for path, h := range adaptertest.FinishRoutes {
				r.GET(path, gin.WrapF(h))
			}
			return r
		},
		Twice: func(outer, inner *core.Limiter) http.Handler {
			r := gin.New()
			g := r.Group("/", ratelimitgin.New(outer))
			g.GET("/twice", ratelimitgin.New(inner), gin.WrapF(adaptertest.TwiceHandler))
			return r
		},
		UsersRoute: "/users/:id",
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

func serve(h http.Handler, path, remote string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.RemoteAddr = remote
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestIgnoresGinClientIP proves the default key is the TCP peer, whatever
// gin's ClientIP would say with X-Forwarded-For and trusted proxies.
func TestIgnoresGinClientIP(t *testing.T) {
	r := gin.New()
	r.ForwardedByClientIP = true
	require.NoError(t, r.SetTrustedProxies([]string{"0.0.0.0/0"}))
	r.Use(ratelimitgin.New(newLimiter(t, core.PerMinute(1))))
	r.GET("/hello", ok)

	first := serve(r, "/hello", "192.0.2.9:1", http.Header{"X-Forwarded-For": {"198.51.100.1"}})
	forged := serve(r, "/hello", "192.0.2.9:1", http.Header{"X-Forwarded-For": {"198.51.100.2"}})

	assert.Equal(t, http.StatusOK, first.Code)
	assert.Equal(t, http.StatusTooManyRequests, forged.Code, "a new X-Forwarded-For must not buy a new quota")
}

// TestMounts checks the middleware per group and per route: only the
// routes it is mounted on are limited.
func TestMounts(t *testing.T) {
	r := gin.New()
	api := r.Group("/api", ratelimitgin.New(newLimiter(t, core.PerMinute(1))))
	api.GET("/a", ok)
	r.GET("/login", ratelimitgin.New(newLimiter(t, core.PerMinute(1))), ok)
	r.GET("/free", ok)

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
		w := serve(r, tt.path, "192.0.2.9:1", nil)
		assert.Equal(t, tt.want, w.Code, tt.path)
	}
}

func TestNewPanicsOnBadConfig(t *testing.T) {
	assert.PanicsWithValue(t, "ratelimitgin.New: ratelimit: middleware: limiter must not be nil", func() { ratelimitgin.New(nil) })
}

// TestJSONLoginBodiesShareTheAccountsLimit replays the review's attack on
// a login that binds JSON with gin (ShouldBindJSON, encoding/json: member
// names match ignoring case, the last match wins): 1,000 attempts on bob
// from one address against 5 a minute per account and address. Before,
// {"account":"decoy-N","Account":"bob"} was counted under decoy-N and all
// 1,000 logged in as bob. Now no body gets bob more than the 5 attempts:
// a case variant is bob's account, and two members for the field are a
// 400 before the handler.
func TestJSONLoginBodiesShareTheAccountsLimit(t *testing.T) {
	const attempts, limit = 1000, 5
	tests := []struct {
		name      string
		body      func(i int) string
		wantAsBob int // attempts the handler ran as bob
	}{
		{"a decoy, then the account in another case", func(i int) string {
			return fmt.Sprintf(`{"account":"decoy-%d","Account":"bob","password":"guess-%d"}`, i, i)
		}, 0},
		{"a decoy, then the account (a duplicate member)", func(i int) string {
			return fmt.Sprintf(`{"account":"decoy-%d","account":"bob","password":"guess-%d"}`, i, i)
		}, 0},
		{"the account in another case alone", func(i int) string {
			return fmt.Sprintf(`{"ACCOUNT":"bob","password":"guess-%d"}`, i)
		}, limit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			account := keyfunc.Must(keyfunc.FormValue("account"))
			peer := keyfunc.Must(keyfunc.PeerIP())
			r := gin.New()
			asBob := 0
			r.POST("/login", ratelimitgin.New(newLimiter(t, core.PerMinute(limit)),
				httplimit.WithKey(keyfunc.Composite(account, peer))), func(c *gin.Context) {
				var login struct {
					Account  string `json:"account"`
					Password string `json:"password"`
				}
				if err := c.ShouldBindJSON(&login); err != nil {
					c.Status(http.StatusBadRequest)
					return
				}
				if login.Account == "bob" {
					asBob++
				}
				c.Status(http.StatusUnauthorized)
			})

			for i := range attempts {
				req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(tt.body(i)))
				req.Header.Set("Content-Type", "application/json")
				req.RemoteAddr = "192.0.2.9:1"
				r.ServeHTTP(httptest.NewRecorder(), req)
			}
			assert.Equal(t, tt.wantAsBob, asBob, "attempts that reached the login as bob")
		})
	}
}
