package httplimit

import (
	"context"
	"net/http"
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
			require.NotNil(t, m.fields.of(res.Tier))
			h := make(http.Header)
			m.fields.set(h, &res, HeadersIETF, time.Now())
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
