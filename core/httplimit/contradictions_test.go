package httplimit_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

func TestMiddlewareOptionsThatContradictEachOtherAreAnError(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerSecond(1)))
	key := func(*http.Request) (string, error) { return "k", nil }
	cost := func(*http.Request) int64 { return 2 }
	tests := []struct {
		name string
		a, b httplimit.Option
		want []string
	}{
		{"WithCost, WithCostFunc", httplimit.WithCost(2), httplimit.WithCostFunc(cost), []string{"WithCost", "WithCostFunc", "contradict"}},
		{"WithCost twice", httplimit.WithCost(2), httplimit.WithCost(3), []string{"WithCost given twice"}},
		{"WithChargeIf, WithCost(0)", httplimit.WithChargeIf(httplimit.FailedRequests), httplimit.WithCost(0),
			[]string{"WithChargeIf", "WithCost(0)", "contradict"}},
		{"WithChargeIf twice", httplimit.WithChargeIf(httplimit.FailedRequests), httplimit.WithChargeIf(httplimit.SuccessfulRequests),
			[]string{"WithChargeIf given twice"}},
		{"WithCostFunc twice", httplimit.WithCostFunc(cost), httplimit.WithCostFunc(cost), []string{"WithCostFunc given twice"}},
		{"WithKey twice", httplimit.WithKey(key), httplimit.WithKey(key), []string{"WithKey given twice"}},
		{"WithTier twice", httplimit.WithTier(func(*http.Request) string { return "" }),
			httplimit.WithTier(func(*http.Request) string { return "" }), []string{"WithTier given twice"}},
		{"WithSkip twice", httplimit.WithSkip(func(*http.Request) bool { return false }),
			httplimit.WithSkip(func(*http.Request) bool { return true }), []string{"WithSkip given twice"}},
		{"WithHeaders twice", httplimit.WithHeaders(httplimit.HeadersIETF), httplimit.WithHeaders(httplimit.HeadersOff), []string{"WithHeaders given twice"}},
		{"WithDenyHandler twice", httplimit.WithDenyHandler(func(http.ResponseWriter, *http.Request, core.Result) {}),
			httplimit.WithDenyHandler(func(http.ResponseWriter, *http.Request, core.Result) {}), []string{"WithDenyHandler given twice"}},
		{"WithErrorHandler twice", httplimit.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) {}),
			httplimit.WithErrorHandler(func(http.ResponseWriter, *http.Request, error) {}), []string{"WithErrorHandler given twice"}},
	}
	for _, tt := range tests {
		for _, order := range [][2]httplimit.Option{{tt.a, tt.b}, {tt.b, tt.a}} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := httplimit.New(l, order[0], order[1])
				require.Error(t, err)
				for _, w := range tt.want {
					assert.Contains(t, err.Error(), w)
				}
			})
		}
	}
	t.Run("WithRouteScope twice is the same thing", func(t *testing.T) {
		_, err := httplimit.New(l, httplimit.WithRouteScope(), httplimit.WithRouteScope())
		assert.NoError(t, err)
	})
	t.Run("WithTierKey without WithTierResolver", func(t *testing.T) {
		_, err := httplimit.New(l, httplimit.WithTierKey(key))
		assert.ErrorContains(t, err, "WithTierKey needs a limiter with WithTierResolver")
	})
}
