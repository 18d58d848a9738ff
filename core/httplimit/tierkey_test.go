package httplimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/internal/tiertest"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// The issue-9 bug: the resolver got the hashed identity ("key:<hash>"), so a
// pro API key silently got free limits. With WithTierKey it gets the raw key,
// its answer is cached, and the identity stays hashed.
func TestTierResolverSeesTheRawAPIKeyThroughTheMiddleware(t *testing.T) {
	resolver := tiertest.NewCountingResolver()
	var seen []core.Request
	var mu sync.Mutex
	obs := observerFunc(func(req core.Request, res core.Result) {
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
	})
	l := newTestLimiter(t, core.WithTiers(
		core.Tier{Name: "free", Limits: []core.Limit{core.PerMinute(2).WithName("api")}},
		core.Tier{Name: "pro", Limits: []core.Limit{core.PerMinute(100).WithName("api")}},
	), core.WithTierResolver(resolver.Resolve, 0, 0), core.WithObserver(obs))
	var got []core.Result
	mw, err := httplimit.New(l,
		httplimit.WithKey(keyfunc.Must(keyfunc.Header("X-API-Key"))),
		httplimit.WithTierKey(func(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil }),
		httplimit.WithDenyHandler(func(w http.ResponseWriter, _ *http.Request, res core.Result) {
			got = append(got, res)
			w.WriteHeader(http.StatusTooManyRequests)
		}))
	require.NoError(t, err)
	send := func(apiKey string) (int, httplimit.Outcome) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-API-Key", apiKey)
		o := mw.Decide(httptest.NewRecorder(), r, "")
		return o.Status(), o
	}

	t.Run("a pro key gets pro limits, resolved once", func(t *testing.T) {
		for i := range 10 {
			status, o := send("pro-key-123")
			require.Equal(t, http.StatusOK, status, "request %d", i+1)
			assert.Equal(t, "pro", o.Result.Tier)
			assert.NoError(t, o.Result.TierErr)
			assert.Equal(t, int64(100-i-1), o.Result.Binding().Remaining)
		}
		assert.Equal(t, 1, resolver.Count("pro-key-123"), "cached after the first request")
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-API-Key", "pro-key-123")
		identity, err := keyfunc.Must(keyfunc.Header("X-API-Key"))(r)
		require.NoError(t, err)
		assert.Zero(t, resolver.Count(identity), "never asked with the hashed identity")
	})
	t.Run("another key gets free limits", func(t *testing.T) {
		for range 2 {
			status, o := send("free-key")
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, "free", o.Result.Tier)
		}
		status, _ := send("free-key")
		assert.Equal(t, http.StatusTooManyRequests, status)
		assert.Equal(t, 1, resolver.Count("free-key"))
	})
	t.Run("errors are not cached and are reported in TierErr", func(t *testing.T) {
		for range 2 {
			status, o := send("broken")
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, "free", o.Result.Tier, "the default tier: the first one")
			assert.ErrorContains(t, o.Result.TierErr, "plans database down")
		}
		assert.Equal(t, 2, resolver.Count("broken"), "asked again: an error is not cached")
	})
	t.Run("a request without a key gets the default tier without a lookup", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-API-Key", "x") // identity from a header the tier key does not read
		mw2, err := httplimit.New(l, httplimit.WithTierKey(func(*http.Request) (string, error) { return "", nil }))
		require.NoError(t, err)
		o := mw2.Decide(httptest.NewRecorder(), r, "")
		require.True(t, o.Allowed())
		assert.Equal(t, "free", o.Result.Tier)
		assert.NoError(t, o.Result.TierErr)
		assert.Zero(t, resolver.Count(""))
	})
	t.Run("the raw key reaches no observer", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, seen)
		for _, req := range seen {
			assert.Empty(t, req.TierKey)
			assert.False(t, strings.Contains(req.Identity, "pro-key-123"), "identity %q", req.Identity)
		}
	})
	t.Run("a failing tier key func stops the request", func(t *testing.T) {
		mw3, err := httplimit.New(l, httplimit.WithTierKey(func(*http.Request) (string, error) { return "", keyfunc.ErrNoKey }))
		require.NoError(t, err)
		o := mw3.Decide(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), "")
		assert.ErrorIs(t, o.Err, keyfunc.ErrNoKey)
		assert.False(t, o.Allowed())
	})
}

// observerFunc is an Observer of decisions only.
type observerFunc func(core.Request, core.Result)

func (f observerFunc) Decided(_ context.Context, req core.Request, res core.Result) { f(req, res) }
func (observerFunc) BreakerChanged(from, to core.BreakerState)                      {}
