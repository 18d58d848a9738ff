package core_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// No order traps: options that set one thing twice, or contradict each
// other, fail at construction naming both, whichever comes first.
func TestLimiterOptionsThatContradictEachOtherAreAnError(t *testing.T) {
	local, err := memstore.New()
	require.NoError(t, err)
	fallback := core.WithFallback(local, 2)
	tests := []struct {
		name string
		a, b core.Option
		want []string // each named in the error
	}{
		{"WithFallback, WithFailureMode(FailOpen)", fallback, core.WithFailureMode(core.FailOpen),
			[]string{"WithFallback", "WithFailureMode(FailOpen)"}},
		{"WithFallback, WithFailureMode(FailClosed)", fallback, core.WithFailureMode(core.FailClosed),
			[]string{"WithFallback", "WithFailureMode(FailClosed)"}},
		{"WithBreaker, WithoutBreaker", core.WithBreaker(core.BreakerConfig{}), core.WithoutBreaker(),
			[]string{"WithBreaker", "WithoutBreaker"}},
		{"WithDefaultTier twice", core.WithDefaultTier("default"), core.WithDefaultTier("default"), []string{"WithDefaultTier given twice"}},
		{"WithPrefix twice", core.WithPrefix("a"), core.WithPrefix("b"), []string{"WithPrefix given twice"}},
		{"WithTimeout twice", core.WithTimeout(time.Second), core.WithTimeout(time.Millisecond), []string{"WithTimeout given twice"}},
		{"WithFailureMode twice", core.WithFailureMode(core.FailOpen), core.WithFailureMode(core.FailClosed), []string{"WithFailureMode given twice"}},
		{"WithBreaker twice", core.WithBreaker(core.BreakerConfig{}), core.WithBreaker(core.BreakerConfig{Failures: 2}), []string{"WithBreaker given twice"}},
		{"WithDenyCache twice", core.WithDenyCache(1), core.WithDenyCache(0), []string{"WithDenyCache given twice"}},
		{"WithFallback twice", fallback, core.WithFallback(local, 3), []string{"WithFallback given twice"}},
		{"WithTierResolver twice", core.WithTierResolver(proResolver, 0, 0), core.WithTierResolver(proResolver, 0, 0),
			[]string{"WithTierResolver given twice"}},
	}
	for _, tt := range tests {
		for _, order := range []struct {
			name  string
			first core.Option
			then  core.Option
		}{{"in order", tt.a, tt.b}, {"reversed", tt.b, tt.a}} {
			t.Run(tt.name+" "+order.name, func(t *testing.T) {
				_, err := core.NewLimiter(local, core.WithLimits(core.PerSecond(1)), order.first, order.then)
				require.Error(t, err)
				for _, w := range tt.want {
					assert.Contains(t, err.Error(), w)
				}
			})
		}
	}
	t.Run("WithFallback with WithFailureMode(FailLocal) agree", func(t *testing.T) {
		_, err := core.NewLimiter(local, core.WithLimits(core.PerSecond(1)), core.WithFailureMode(core.FailLocal), fallback)
		assert.NoError(t, err)
	})
	t.Run("WithFailureMode(FailLocal) without WithFallback", func(t *testing.T) {
		_, err := core.NewLimiter(local, core.WithLimits(core.PerSecond(1)), core.WithFailureMode(core.FailLocal))
		assert.ErrorContains(t, err, "WithFallback")
	})
}

func TestMiddlewareOptionsThatContradictEachOtherAreAnError(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerSecond(1)))
	key := func(*http.Request) (string, error) { return "k", nil }
	cost := func(*http.Request) int64 { return 2 }
	tests := []struct {
		name string
		a, b core.HTTPOption
		want []string
	}{
		{"HTTPCost, HTTPCostFunc", core.HTTPCost(2), core.HTTPCostFunc(cost), []string{"HTTPCost", "HTTPCostFunc", "contradict"}},
		{"HTTPCost twice", core.HTTPCost(2), core.HTTPCost(3), []string{"HTTPCost given twice"}},
		{"HTTPChargeIf, HTTPCost(0)", core.HTTPChargeIf(core.FailedRequests), core.HTTPCost(0),
			[]string{"HTTPChargeIf", "HTTPCost(0)", "contradict"}},
		{"HTTPChargeIf twice", core.HTTPChargeIf(core.FailedRequests), core.HTTPChargeIf(core.SuccessfulRequests),
			[]string{"HTTPChargeIf given twice"}},
		{"HTTPCostFunc twice", core.HTTPCostFunc(cost), core.HTTPCostFunc(cost), []string{"HTTPCostFunc given twice"}},
		{"HTTPKeyFunc twice", core.HTTPKeyFunc(key), core.HTTPKeyFunc(key), []string{"HTTPKeyFunc given twice"}},
		{"HTTPTierFunc twice", core.HTTPTierFunc(func(*http.Request) string { return "" }),
			core.HTTPTierFunc(func(*http.Request) string { return "" }), []string{"HTTPTierFunc given twice"}},
		{"HTTPSkip twice", core.HTTPSkip(func(*http.Request) bool { return false }),
			core.HTTPSkip(func(*http.Request) bool { return true }), []string{"HTTPSkip given twice"}},
		{"HTTPHeaders twice", core.HTTPHeaders(core.HeadersIETF), core.HTTPHeaders(core.HeadersOff), []string{"HTTPHeaders given twice"}},
		{"HTTPDenyHandler twice", core.HTTPDenyHandler(func(http.ResponseWriter, *http.Request, core.Result) {}),
			core.HTTPDenyHandler(func(http.ResponseWriter, *http.Request, core.Result) {}), []string{"HTTPDenyHandler given twice"}},
		{"HTTPErrorHandler twice", core.HTTPErrorHandler(func(http.ResponseWriter, *http.Request, error) {}),
			core.HTTPErrorHandler(func(http.ResponseWriter, *http.Request, error) {}), []string{"HTTPErrorHandler given twice"}},
	}
	for _, tt := range tests {
		for _, order := range [][2]core.HTTPOption{{tt.a, tt.b}, {tt.b, tt.a}} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := core.NewMiddleware(l, order[0], order[1])
				require.Error(t, err)
				for _, w := range tt.want {
					assert.Contains(t, err.Error(), w)
				}
			})
		}
	}
	t.Run("HTTPRouteScope twice is the same thing", func(t *testing.T) {
		_, err := core.NewMiddleware(l, core.HTTPRouteScope(), core.HTTPRouteScope())
		assert.NoError(t, err)
	})
	t.Run("HTTPTierKey without WithTierResolver", func(t *testing.T) {
		_, err := core.NewMiddleware(l, core.HTTPTierKey(key))
		assert.ErrorContains(t, err, "HTTPTierKey needs a limiter with WithTierResolver")
	})
}
