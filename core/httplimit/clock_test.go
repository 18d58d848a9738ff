package httplimit_test

import (
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

func TestMiddlewareHeaderTimeFollowsTheStoresInjectedClock(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	ms, err := memstore.New(memstore.WithClock(func() time.Time { return at }))
	require.NoError(t, err)
	l := core.MustNewLimiter(ms, core.WithLimits(core.PerMinute(10)))
	mw, err := httplimit.New(l, httplimit.WithHeaders(httplimit.HeadersXRateLimit))
	require.NoError(t, err)

	w := httptest.NewRecorder()
	o := mw.Decide(w, httptest.NewRequest(http.MethodGet, "/", nil), "")
	require.True(t, o.Allowed())
	// One of ten per minute used: full again in 6 s of the store's clock.
	assert.Equal(t, "1700000006", w.Header().Get("X-RateLimit-Reset"))
}
