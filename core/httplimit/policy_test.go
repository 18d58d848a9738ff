package httplimit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The RateLimit-Policy value and the start of the RateLimit value a
// middleware formats once per tier are the ones SetHeaders would format
// from the Result's decisions, for the store's decisions and for the
// fallback's (whose limits are shares of the tier's).
func TestPrecomputedPolicyMatchesTheDecisions(t *testing.T) {
	limits := []core.Limit{core.PerDay(10_000).WithName("d"), core.PerSecond(10).WithName("s")} // "s", the second, binds
	tests := []struct {
		name    string
		store   core.Store
		options []core.Option
	}{
		{"store decisions", &recordingStore{}, nil},
		{"fallback decisions", &recordingStore{err: errDown}, []core.Option{core.WithFallback(&recordingStore{}, 3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := core.MustNewLimiter(tt.store, append([]core.Option{core.WithLimits(limits...)}, tt.options...)...)
			res, err := l.Allow(context.Background(), "a")
			require.NoError(t, err)
			m, err := New(l)
			require.NoError(t, err)
			require.NotNil(t, m.fields.Load().of(res.Tier))
			h := make(http.Header)
			assert.False(t, m.fields.Load().set(h, &res, HeadersIETF, time.Now()), "not stale")
			assert.Equal(t, formatPolicy(res.Decisions()), h.Get(HeaderRateLimitPolicy))
			b := res.Binding()
			require.Equal(t, "s", b.Limit.Name)
			assert.Equal(t, formatRateLimit(b, moreQuotaDelay(b)), h.Get(HeaderRateLimit))
			hand := make(http.Header)
			SetHeaders(hand, core.NewResult(res.Decisions()...), HeadersIETF, time.Now())
			assert.Equal(t, hand, h, "the fields of a hand-made Result of the same decisions")
		})
	}
}

// After the limiter's tiers change, a response carries the new limits'
// fields, never the old tier's of the same name, and the fields are
// formatted anew once, not on every response.
func TestFieldsFollowSetTiers(t *testing.T) {
	l := core.MustNewLimiter(&recordingStore{}, core.WithLimits(core.PerSecond(10).WithName("s")))
	m, err := New(l)
	require.NoError(t, err)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), func(*http.Request) string { return "" })
	serve := func() string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		require.Equal(t, http.StatusOK, w.Code)
		return w.Header().Get(HeaderRateLimitPolicy)
	}
	assert.Equal(t, `"s";q=10;w=1`, serve())
	before := m.fields.Load()
	assert.Equal(t, `"s";q=10;w=1`, serve())
	assert.Same(t, before, m.fields.Load(), "fields that fit are kept")

	require.NoError(t, l.SetTiers([]core.Tier{{Name: core.DefaultTierName, Limits: []core.Limit{core.PerMinute(20).WithName("t")}}}, ""))
	assert.Equal(t, `"t";q=20;w=60`, serve(), "the new limits, in the response that found the fields stale")
	after := m.fields.Load()
	assert.NotSame(t, before, after, "formatted anew")
	assert.Equal(t, `"t";q=20;w=60`, serve())
	assert.Same(t, after, m.fields.Load(), "once")
}
