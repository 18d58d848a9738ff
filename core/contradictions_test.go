package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/internal/tiertest"
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
		{"WithTierResolver twice", core.WithTierResolver(tiertest.ProResolver, 0, 0), core.WithTierResolver(tiertest.ProResolver, 0, 0),
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
