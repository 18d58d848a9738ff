package httplimit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// On the 25-hour day of 26 October 2025 in Madrid (22:00Z on the 25th to
// 23:00Z on the 26th), a denial at 22:30Z waits 30 minutes, the time to
// the real local midnight, in every header that says when; the policy
// keeps the nominal day.
func TestCalendarHeadersCountToTheRealBoundary(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	now := time.Date(2025, time.October, 26, 22, 30, 0, 0, time.UTC)
	store, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	limiter := core.MustNewLimiter(store, core.WithLimits(core.PerCalendarDay(2, madrid)))
	ctx := context.Background()
	for range 2 {
		res, err := limiter.Allow(ctx, "client")
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}

	res, err := limiter.Allow(ctx, "client")

	require.NoError(t, err)
	require.False(t, res.Allowed)
	assert.Equal(t, 30*time.Minute, res.Binding().RetryAfter)
	h := make(http.Header)
	httplimit.SetHeaders(h, res, httplimit.HeadersIETF|httplimit.HeadersLegacy|httplimit.HeadersXRateLimit, now)
	assert.Equal(t, `"2-per-day-Europe.Madrid";q=2;w=86400`, h.Get("RateLimit-Policy"))
	assert.Equal(t, `"2-per-day-Europe.Madrid";r=0;t=1800`, h.Get("RateLimit"))
	assert.Equal(t, "1800", h.Get("Retry-After"))
	assert.Equal(t, "1800", h.Get("RateLimit-Reset"))
	assert.Equal(t, "1761519600", h.Get("X-RateLimit-Reset"), "23:00Z, midnight CET, in Unix seconds")
}
