package httplimit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// A client locked out by a limit's Lockout reads a 429 with Retry-After
// until the lockout ends, and rate-limit fields that promise no quota
// sooner.
func TestLockedOutIs429UntilTheLockoutEnds(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	store, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	login := core.PerMinute(3).WithName("login").WithLockout(core.Lockout{After: 1, Within: time.Minute, For: 15 * time.Minute})
	l, err := core.NewLimiter(store, core.WithLimits(login))
	require.NoError(t, err)
	m, err := httplimit.New(l, httplimit.WithHeaders(httplimit.HeadersIETF|httplimit.HeadersLegacy|httplimit.HeadersXRateLimit))
	require.NoError(t, err)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), func(*http.Request) string { return "/login" })
	get := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/login", nil)
		r.RemoteAddr = "203.0.113.7:1234"
		h.ServeHTTP(w, r)
		return w
	}
	for range 3 {
		require.Equal(t, http.StatusOK, get().Code)
	}

	for i := range 2 { // the denial that locks out, then one answered from the deny cache
		w := get()
		assert.Equal(t, http.StatusTooManyRequests, w.Code, "request %d", i+4)
		assert.Equal(t, "900", w.Header().Get("Retry-After"), "request %d", i+4)
		assert.Equal(t, `"login";r=0;t=900`, w.Header().Get("RateLimit"), "request %d", i+4)
		assert.Equal(t, "900", w.Header().Get("RateLimit-Reset"), "request %d", i+4)
		var p httplimit.Problem
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
		assert.Equal(t, http.StatusTooManyRequests, p.Status)
		assert.Equal(t, int64(900), p.RetryAfter)
	}
}
