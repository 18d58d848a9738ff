package ratelimitprom_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

func newMemstore(t *testing.T, c *storetest.Clock) *memstore.Store {
	t.Helper()
	s, err := memstore.New(memstore.WithClock(c.Now))
	require.NoError(t, err)
	return s
}

// switchStore fails with core.ErrStoreUnavailable while down is set, and
// otherwise asks next.
type switchStore struct {
	mu   sync.Mutex
	down bool
	next core.Store
}

func (s *switchStore) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Capabilities implements core.Capable with next's clock, so the
// limiter's breaker follows the test clock given to next.
func (s *switchStore) Capabilities() core.Capabilities {
	return core.Capabilities{Clock: core.CapabilitiesOf(s.next).Clock}
}

func (s *switchStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return dst, core.ErrStoreUnavailable
	}
	return s.next.Take(ctx, dst, keys, limits, cost)
}

// takeN makes n requests of identity on route through l.
func takeN(t *testing.T, l *core.Limiter, route, identity string, n int) {
	t.Helper()
	for range n {
		_, err := l.Take(context.Background(), core.Request{Identity: identity, Cost: 1, Route: route})
		require.NoError(t, err)
	}
}

// collectText registers c with a pedantic registry and returns the metric
// families named names in the text exposition format, like
// prometheus/testutil.CollectAndCompare compares them.
//
// (testutil itself needs a go.sum entry for github.com/kylelemons/godebug
// that the module does not have yet.)
func collectText(t *testing.T, c prometheus.Collector, names ...string) string {
	t.Helper()
	var b strings.Builder
	for _, f := range gather(t, c, names...) {
		_, err := expfmt.MetricFamilyToText(&b, f)
		require.NoError(t, err)
	}
	return b.String()
}

// gather returns the metric families of c named names (all when none).
func gather(t *testing.T, c prometheus.Collector, names ...string) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	families, err := reg.Gather()
	require.NoError(t, err)
	if len(names) == 0 {
		return families
	}
	var kept []*dto.MetricFamily
	for _, f := range families {
		if slices.Contains(names, f.GetName()) {
			kept = append(kept, f)
		}
	}
	return kept
}

// countSeries returns how many series the family name of c has.
func countSeries(t *testing.T, c prometheus.Collector, name string) int {
	t.Helper()
	n := 0
	for _, f := range gather(t, c, name) {
		n += len(f.GetMetric())
	}
	return n
}

// breakerState returns the value of ratelimit_breaker_state.
func breakerState(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	families := gather(t, c, "ratelimit_breaker_state")
	require.Len(t, families, 1)
	return families[0].GetMetric()[0].GetGauge().GetValue()
}

// expect trims the leading newline of a raw-string expectation.
func expect(text string) string { return strings.TrimPrefix(text, "\n") }
