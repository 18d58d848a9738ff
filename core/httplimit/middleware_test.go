package httplimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

var middlewareNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestLimiter returns a limiter over a memstore frozen at middlewareNow.
func newTestLimiter(t *testing.T, opts ...core.Option) *core.Limiter {
	t.Helper()
	store, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	l, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	return l
}

func TestNewMiddlewareRejectsBadOptions(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerSecond(1)))
	tests := []struct {
		name string
		opt  httplimit.Option
		want string
	}{
		{"nil key func", httplimit.WithKey(nil), "WithKey"},
		{"nil cost func", httplimit.WithCostFunc(nil), "WithCostFunc"},
		{"negative cost", httplimit.WithCost(-1), "WithCost"},
		{"nil skip func", httplimit.WithSkip(nil), "WithSkip"},
		{"nil tier func", httplimit.WithTier(nil), "WithTier"},
		{"nil deny handler", httplimit.WithDenyHandler(nil), "WithDenyHandler"},
		{"nil error handler", httplimit.WithErrorHandler(nil), "WithErrorHandler"},
		{"unknown header format", httplimit.WithHeaders(0x10), "WithHeaders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := httplimit.New(l, tt.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("nil limiter", func(t *testing.T) {
		_, err := httplimit.New(nil)
		assert.ErrorContains(t, err, "limiter")
	})
}

// recordingStore remembers the keys of its last call.
type recordingStore struct {
	core.Store
	keys []string
}

func (s *recordingStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.keys = append([]string(nil), keys...)
	return s.Store.Take(ctx, dst, keys, limits, cost)
}

func TestMiddlewareDecide(t *testing.T) {
	errNoKey := errors.New("no key")
	tests := []struct {
		name     string
		opts     []httplimit.Option
		remote   string
		route    string
		want     func(t *testing.T, o httplimit.Outcome)
		wantKey  string // store key of the request, when it reaches the store
		wantHead string // RateLimit field
	}{
		{
			name: "default: peer address, cost 1", remote: "192.0.2.7:5555", route: "/users/:id",
			wantKey: "rl:{192.0.2.7}:burst:g", wantHead: `"burst";r=2;t=1`,
		},
		{
			name: "ipv6 peer grouped by /64", remote: "[2001:db8:1:2:aaaa::1]:443",
			wantKey: "rl:{2001:db8:1:2::/64}:burst:g", wantHead: `"burst";r=2;t=1`,
		},
		{
			name: "route scope joins the route template", remote: "192.0.2.7:5555", route: "/users/:id",
			opts:    []httplimit.Option{httplimit.WithRouteScope()},
			wantKey: "rl:{" + core.SafeIdentity(core.Identity("/users/:id", "192.0.2.7")) + "}:burst:g", wantHead: `"burst";r=2;t=1`,
		},
		{
			name: "cost func", remote: "192.0.2.7:1", opts: []httplimit.Option{httplimit.WithCost(3)},
			wantKey: "rl:{192.0.2.7}:burst:g", wantHead: `"burst";r=0;t=1`, // empty, the next one back in 1 s
		},
		{
			name: "skip: no store call, no fields", remote: "192.0.2.7:1",
			opts: []httplimit.Option{httplimit.WithSkip(func(*http.Request) bool { return true })},
			want: func(t *testing.T, o httplimit.Outcome) {
				assert.Equal(t, httplimit.Outcome{Skipped: true}, o)
				assert.True(t, o.Allowed())
			},
		},
		{
			name: "key func error", remote: "192.0.2.7:1",
			opts: []httplimit.Option{httplimit.WithKey(func(*http.Request) (string, error) { return "", errNoKey })},
			want: func(t *testing.T, o httplimit.Outcome) {
				assert.ErrorIs(t, o.Err, errNoKey)
				assert.False(t, o.Allowed())
				assert.Equal(t, http.StatusInternalServerError, o.Status())
			},
		},
		{
			name: "unix socket peer is a key error", remote: "@",
			want: func(t *testing.T, o httplimit.Outcome) { assert.ErrorIs(t, o.Err, httplimit.ErrNoRemoteAddr) },
		},
		{
			name: "negative cost is an error", remote: "192.0.2.7:1",
			opts: []httplimit.Option{httplimit.WithCostFunc(func(*http.Request) int64 { return -1 })},
			want: func(t *testing.T, o httplimit.Outcome) { assert.ErrorIs(t, o.Err, core.ErrInvalidCost) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
			require.NoError(t, err)
			rec := &recordingStore{Store: store}
			l, err := core.NewLimiter(rec, core.WithLimits(core.PerSecond(1).WithBurst(3).WithName("burst")))
			require.NoError(t, err)
			mw, err := httplimit.New(l, tt.opts...)
			require.NoError(t, err)
			r := httptest.NewRequest(http.MethodGet, "/users/42", nil)
			r.RemoteAddr = tt.remote
			w := httptest.NewRecorder()

			o := mw.Decide(w, r, tt.route)

			if tt.want != nil {
				tt.want(t, o)
				assert.Empty(t, w.Header(), "no fields without a decision")
				return
			}
			require.NoError(t, o.Err)
			assert.True(t, o.Allowed())
			assert.Equal(t, []string{tt.wantKey}, rec.keys)
			assert.Equal(t, tt.wantHead, w.Header().Get("RateLimit"))
		})
	}
}

func TestMiddlewareTierFunc(t *testing.T) {
	l := newTestLimiter(t,
		core.WithTier("free", core.PerMinute(1).WithName("free")),
		core.WithTier("pro", core.PerMinute(100).WithName("pro")))
	mw, err := httplimit.New(l, httplimit.WithTier(func(r *http.Request) string {
		if r.Header.Get("X-API-Key") == "pro-key" {
			return "pro"
		}
		return ""
	}))
	require.NoError(t, err)

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-API-Key", "pro-key")
	o := mw.Decide(httptest.NewRecorder(), r, "/")

	assert.Equal(t, "pro", o.Result.Tier)
}

func TestMiddlewareHandler(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerMinute(1).WithName("m")))
	mw, err := httplimit.New(l)
	require.NoError(t, err)
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := mw.Handler(next, func(*http.Request) string { return "/" })

	tests := []struct {
		name       string
		wantStatus int
		wantRetry  string
	}{
		{"first request passes", http.StatusNoContent, ""},
		{"second is denied with Retry-After", http.StatusTooManyRequests, "60"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
			assert.Equal(t, tt.wantStatus, w.Code)
			assert.Equal(t, tt.wantRetry, w.Header().Get("Retry-After"))
		})
	}
}

func TestMiddlewareCustom(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerSecond(1)))
	deny := func(http.ResponseWriter, *http.Request, core.Result) {}
	fail := func(http.ResponseWriter, *http.Request, error) {}
	denial, failure := httplimit.Outcome{}, httplimit.Outcome{Err: errors.New("x")}
	tests := []struct {
		name                    string
		opts                    []httplimit.Option
		wantDenial, wantFailure bool
	}{
		{"defaults", nil, false, false},
		{"deny handler", []httplimit.Option{httplimit.WithDenyHandler(deny)}, true, false},
		{"error handler", []httplimit.Option{httplimit.WithErrorHandler(fail)}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mw, err := httplimit.New(l, tt.opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.wantDenial, mw.Custom(denial))
			assert.Equal(t, tt.wantFailure, mw.Custom(failure))
		})
	}
}

func TestRemoteAddrKey(t *testing.T) {
	tests := []struct {
		remote, want string
	}{
		{"203.0.113.9:1234", "203.0.113.9"},
		{"203.0.113.9", "203.0.113.9"},
		{"[::ffff:203.0.113.9]:80", "203.0.113.9"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"[2001:db8::1]:80", "2001:db8::/64"},
		{"[2001:db8:0:0:ffff::2]:80", "2001:db8::/64"},
	}
	for _, tt := range tests {
		t.Run(tt.remote, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tt.remote}
			got, err := httplimit.RemoteAddrKey(r)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	for _, bad := range []string{"", "example.com:80", "not an address", "/tmp/sock"} {
		t.Run("rejects "+bad, func(t *testing.T) {
			_, err := httplimit.RemoteAddrKey(&http.Request{RemoteAddr: bad})
			assert.ErrorIs(t, err, httplimit.ErrNoRemoteAddr)
		})
	}
}

// A key function's error reaches the error handler (and its log line)
// with one "ratelimit:" prefix for the whole chain, not one per layer.
func TestKeyErrorSaysItsPrefixOnce(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerSecond(1)))
	mw, err := httplimit.New(l, httplimit.WithKey(keyfunc.Composite(keyfunc.Must(keyfunc.Header("X-API-Key")))))
	require.NoError(t, err)
	o := mw.Decide(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), "")
	require.ErrorIs(t, o.Err, keyfunc.ErrNoKey)
	assert.Equal(t, "ratelimit: key: keyfunc: composite part 0: X-Api-Key: missing, empty or oversized: no key in request", o.Err.Error())
}
