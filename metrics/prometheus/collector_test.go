package ratelimitprom_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

const requestsHeader = `
# HELP ratelimit_requests_total Requests decided by the rate limiter, by tier, binding limit, route template and result.
# TYPE ratelimit_requests_total counter`

func TestCollectorCountsRequestsByResult(t *testing.T) {
	perSecond := core.PerSecond(2).WithName("per-second")
	tests := []struct {
		name string
		opts []core.Option
		down bool
		want string
	}{
		{
			name: "enforcing: two allowed, one denied",
			want: `
ratelimit_requests_total{limit="per-second",result="allowed",route="/users/:id",tier="default"} 2
ratelimit_requests_total{limit="per-second",result="denied",route="/users/:id",tier="default"} 1
`,
		},
		{
			name: "shadow mode: the denial is admitted and counted as shadow_denied",
			opts: []core.Option{core.WithShadow()},
			want: `
ratelimit_requests_total{limit="per-second",result="allowed",route="/users/:id",tier="default"} 2
ratelimit_requests_total{limit="per-second",result="shadow_denied",route="/users/:id",tier="default"} 1
`,
		},
		{
			name: "store down, fail open: degraded_allowed",
			down: true,
			want: `
ratelimit_requests_total{limit="per-second",result="degraded_allowed",route="/users/:id",tier="default"} 3
`,
		},
		{
			name: "store down, fail closed: degraded_denied",
			opts: []core.Option{core.WithFailureMode(core.FailClosed)},
			down: true,
			want: `
ratelimit_requests_total{limit="per-second",result="degraded_denied",route="/users/:id",tier="default"} 3
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := storetest.NewClock()
			store := &switchStore{next: newMemstore(t, clk), down: tt.down}
			metrics := ratelimitprom.MustNew()
			opts := append([]core.Option{core.WithLimits(perSecond), core.WithObserver(metrics)}, tt.opts...)
			l, err := core.NewLimiter(store, opts...)
			require.NoError(t, err)

			takeN(t, l, "/users/:id", "203.0.113.7", 3)

			assert.Equal(t, expect(requestsHeader+tt.want), collectText(t, metrics, "ratelimit_requests_total"))
		})
	}
}

func TestCollectorLabelsTheBindingLimitAndTier(t *testing.T) {
	clk := storetest.NewClock()
	metrics := ratelimitprom.MustNew()
	l, err := core.NewLimiter(newMemstore(t, clk),
		core.WithTier("free", core.PerSecond(10).WithName("burst"), core.PerMinute(2).WithName("minute")),
		core.WithTier("pro", core.PerSecond(100).WithName("burst")),
		core.WithObserver(metrics))
	require.NoError(t, err)
	ctx := context.Background()

	for range 3 {
		_, err := l.Take(ctx, core.Request{Identity: "a", Tier: "free", Cost: 1, Route: "/search"})
		require.NoError(t, err)
	}
	_, err = l.Take(ctx, core.Request{Identity: "b", Tier: "pro", Cost: 1, Route: "/search"})
	require.NoError(t, err)

	want := `
ratelimit_requests_total{limit="burst",result="allowed",route="/search",tier="pro"} 1
ratelimit_requests_total{limit="minute",result="allowed",route="/search",tier="free"} 2
ratelimit_requests_total{limit="minute",result="denied",route="/search",tier="free"} 1
`
	assert.Equal(t, expect(requestsHeader+want), collectText(t, metrics, "ratelimit_requests_total"))
}

func TestCollectorCapsDistinctRoutes(t *testing.T) {
	clk := storetest.NewClock()
	metrics := ratelimitprom.MustNew(ratelimitprom.WithMaxRoutes(2))
	l, err := core.NewLimiter(newMemstore(t, clk), core.WithLimits(core.PerSecond(100).WithName("s")), core.WithObserver(metrics))
	require.NoError(t, err)

	for _, route := range []string{"/a", "/b", "/c", "/d", "/a", ""} {
		takeN(t, l, route, "client", 1)
	}

	want := `
ratelimit_requests_total{limit="s",result="allowed",route="",tier="default"} 1
ratelimit_requests_total{limit="s",result="allowed",route="/a",tier="default"} 2
ratelimit_requests_total{limit="s",result="allowed",route="/b",tier="default"} 1
ratelimit_requests_total{limit="s",result="allowed",route="_other",tier="default"} 2
`
	assert.Equal(t, expect(requestsHeader+want), collectText(t, metrics, "ratelimit_requests_total"))
}

func TestCollectorRouteCapHoldsUnderConcurrency(t *testing.T) {
	const maxRoutes, workers, routesPerWorker = 10, 8, 50
	metrics := ratelimitprom.MustNew(ratelimitprom.WithMaxRoutes(maxRoutes))
	res := core.NewResult(core.Decision{Allowed: true, Limit: core.PerSecond(1).WithName("s")})
	res.Tier = "t"

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range routesPerWorker {
				metrics.Decided(context.Background(), core.Request{Route: fmt.Sprintf("/w%d/r%d", w, i)}, res)
			}
		})
	}
	wg.Wait()

	assert.Equal(t, maxRoutes+1, countSeries(t, metrics, "ratelimit_requests_total"),
		"the capped routes plus the overflow series")
}

func TestCollectorTracksTheBreaker(t *testing.T) {
	clk := storetest.NewClock()
	store := &switchStore{next: newMemstore(t, clk), down: true}
	metrics := ratelimitprom.MustNew()
	l, err := core.NewLimiter(store, core.WithLimits(core.PerSecond(10)), core.WithObserver(metrics),
		core.WithBreaker(core.BreakerConfig{Failures: 2, OpenFor: time.Second}))
	require.NoError(t, err)

	takeN(t, l, "", "c", 2)
	require.Equal(t, core.BreakerOpen, l.BreakerState())
	assert.Equal(t, 1.0, breakerState(t, metrics), "open")

	clk.Advance(time.Second)
	store.setDown(false)
	takeN(t, l, "", "c", 1) // the probe: half-open, then closed
	require.Equal(t, core.BreakerClosed, l.BreakerState())
	assert.Equal(t, 0.0, breakerState(t, metrics), "closed")

	want := `
# HELP ratelimit_breaker_transitions_total Changes of the rate limiter's circuit breaker state.
# TYPE ratelimit_breaker_transitions_total counter
ratelimit_breaker_transitions_total{from="closed",to="open"} 1
ratelimit_breaker_transitions_total{from="half_open",to="closed"} 1
ratelimit_breaker_transitions_total{from="open",to="half_open"} 1
`
	assert.Equal(t, expect(want), collectText(t, metrics, "ratelimit_breaker_transitions_total"))
}

func TestCollectorBreakerStateGaugeValues(t *testing.T) {
	tests := []struct {
		to   core.BreakerState
		want float64
	}{
		{core.BreakerClosed, 0},
		{core.BreakerOpen, 1},
		{core.BreakerHalfOpen, 2},
	}
	for _, tt := range tests {
		t.Run(tt.to.String(), func(t *testing.T) {
			metrics := ratelimitprom.MustNew()
			metrics.BreakerChanged(core.BreakerOpen, tt.to)
			assert.Equal(t, tt.want, breakerState(t, metrics))
		})
	}
}

func TestCollectorRegistersAndLintsClean(t *testing.T) {
	metrics := ratelimitprom.MustNew(ratelimitprom.WithConstLabels(prometheus.Labels{"limiter": "login"}))
	metrics.Decided(context.Background(), core.Request{}, core.Result{Allowed: true, Tier: "t"})
	metrics.BreakerChanged(core.BreakerClosed, core.BreakerOpen)
	_, err := metrics.InstrumentStore(&switchStore{down: true}).Take(context.Background(), nil, nil, nil, 1)
	require.ErrorIs(t, err, core.ErrStoreUnavailable)
	families := gather(t, metrics)
	require.Len(t, families, 6, "the four touched, and the active controls gauges, present from the start")

	problems, err := promlint.NewWithMetricFamilies(families).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems)
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, p := range m.GetLabel() {
				labels[p.GetName()] = p.GetValue()
			}
			assert.Equal(t, "login", labels["limiter"], f.GetName())
		}
	}
}

// Lockouts are counted by tier and limit, reloads by result, and the
// active controls gauges follow the last report.
func TestCollectorControls(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	ctx := context.Background()
	lockout := core.ControlEvent{Kind: core.ControlLockedOut, Identity: "203.0.113.7", Tier: "login", Limits: []string{"attempts"}}
	metrics.Controlled(ctx, lockout)
	metrics.Controlled(ctx, lockout)
	metrics.Controlled(ctx, core.ControlEvent{Kind: core.ControlReloaded})
	metrics.Controlled(ctx, core.ControlEvent{Kind: core.ControlReloadFailed, Err: errors.New("bad")})
	metrics.Controlled(ctx, core.ControlEvent{Kind: core.ControlBlocked, Identity: "x"}) // counted by the gauges, not here
	metrics.ControlsActive(3, 1)
	metrics.ControlsActive(2, 4)

	assert.Equal(t, expect(`
# HELP ratelimit_lockouts_total Takes the store answered locked out (a limit's lockout holds the client), by tier and limit: about one per lockout per node with the deny cache on.
# TYPE ratelimit_lockouts_total counter
ratelimit_lockouts_total{limit="attempts",tier="login"} 2
`), collectText(t, metrics, "ratelimit_lockouts_total"))
	assert.Equal(t, expect(`
# HELP ratelimit_policy_reloads_total Policies reported to the limiter, by result: ok (applied) or failed (refused, the old one still applies).
# TYPE ratelimit_policy_reloads_total counter
ratelimit_policy_reloads_total{result="failed"} 1
ratelimit_policy_reloads_total{result="ok"} 1
`), collectText(t, metrics, "ratelimit_policy_reloads_total"))
	assert.Equal(t, expect(`
# HELP ratelimit_active_blocks Clients an operator blocked, block in force, as the node's copy of the controls holds them.
# TYPE ratelimit_active_blocks gauge
ratelimit_active_blocks 4
# HELP ratelimit_active_overrides Clients with an override of their limits in force, as the node's copy of the controls holds them.
# TYPE ratelimit_active_overrides gauge
ratelimit_active_overrides 2
`), collectText(t, metrics, "ratelimit_active_blocks", "ratelimit_active_overrides"))
	assert.NotContains(t, collectText(t, metrics), "203.0.113.7", "no identity in any label")
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  ratelimitprom.Option
		want string
	}{
		{"WithMaxRoutes(0)", ratelimitprom.WithMaxRoutes(0), "WithMaxRoutes must be positive"},
		{"WithBuckets()", ratelimitprom.WithBuckets(), "at least one bound"},
		{"WithBuckets(2, 1)", ratelimitprom.WithBuckets(2, 1), "must increase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ratelimitprom.New(tt.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "ratelimit: "), err.Error())
		})
	}
}

// A request whose tier resolver failed counts in ratelimit_tier_errors_total,
// under the tier applied: the last known one (stale) or the default.
func TestCollectorCountsTierResolverFailures(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	stale := fmt.Errorf("%w: %w", core.ErrTierStale, core.ErrTierTimeout)
	for _, res := range []core.Result{
		{Tier: "pro", TierErr: stale},
		{Tier: "free", TierErr: fmt.Errorf("ratelimit: resolve tier: plans database down")},
		{Tier: "free", TierErr: fmt.Errorf("ratelimit: resolve tier: plans database down")},
		{Tier: "pro"},
	} {
		metrics.Decided(context.Background(), core.Request{Identity: "a", Cost: 1}, res)
	}
	assert.Equal(t, expect(`
# HELP ratelimit_tier_errors_total Requests whose tier resolver failed or named an unknown tier, by the tier applied and whether it was the last known one (stale) or the default.
# TYPE ratelimit_tier_errors_total counter
ratelimit_tier_errors_total{result="default",tier="free"} 2
ratelimit_tier_errors_total{result="stale",tier="pro"} 1
`), collectText(t, metrics, "ratelimit_tier_errors_total"))
}
