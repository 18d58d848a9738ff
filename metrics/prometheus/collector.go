package ratelimitprom

import (
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratelimitkit/ratelimit/core"
)

// Values of the result label of ratelimit_requests_total. Every request a
// limiter decided is counted under exactly one of them.
const (
	// ResultAllowed: the limits admitted the request.
	ResultAllowed = "allowed"
	// ResultDenied: a limit denied the request.
	ResultDenied = "denied"
	// ResultShadowDenied: a limit denied the request, but shadow mode
	// ([core.WithShadow]) admitted it.
	ResultShadowDenied = "shadow_denied"
	// ResultDegradedAllowed: the store was unavailable and the failure mode
	// admitted the request (fail open, or the local fallback admitted it).
	ResultDegradedAllowed = "degraded_allowed"
	// ResultDegradedDenied: the store was unavailable and the failure mode
	// denied the request (fail closed, or the local fallback denied it).
	ResultDegradedDenied = "degraded_denied"
)

// A Collector turns the decisions, leases, breaker changes and controls of
// a [core.Limiter] into Prometheus metrics. It implements
// [core.ReleaseObserver] and [core.ControlObserver] (pass it to
// [core.WithObserver]) and
// [prometheus.Collector] (register it with a registry);
// [Collector.InstrumentStore] adds store latency.
//
// One Collector may observe several limiters; their series then add up,
// and the breaker state and active controls gauges show whichever changed
// last, so give each limiter its own Collector ([WithConstLabels]) when
// that matters.
//
// A Collector is safe for concurrent use and starts no goroutine. Make one
// with [New].
type Collector struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	state       prometheus.Gauge
	transitions *prometheus.CounterVec
	inFlight    *prometheus.GaugeVec
	tierErrors  *prometheus.CounterVec
	overrides   prometheus.Gauge
	blocks      prometheus.Gauge
	lockouts    *prometheus.CounterVec
	reloads     *prometheus.CounterVec
	leases      sync.Map // *core.Lease -> []prometheus.Gauge it raised, until Released
	routes      *routeSet
}

var (
	_ core.ReleaseObserver = (*Collector)(nil)
	_ core.ControlObserver = (*Collector)(nil)
	_ prometheus.Collector = (*Collector)(nil)
)

// New returns a Collector configured by opts. Register it with a registry
// (reg.MustRegister) and pass it to [core.WithObserver].
func New(opts ...Option) (*Collector, error) {
	c := config{maxRoutes: DefaultMaxRoutes, buckets: DefaultBuckets}
	for _, opt := range opts {
		if err := opt(&c); err != nil {
			return nil, err
		}
	}
	return &Collector{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "ratelimit_requests_total",
			Help:        "Requests decided by the rate limiter, by tier, binding limit, route template and result.",
			ConstLabels: c.constLabels,
		}, []string{"tier", "limit", "route", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "ratelimit_store_duration_seconds",
			Help:        "Duration of rate-limit store calls (one per request that reached the store), by result: ok, unavailable or error.",
			Buckets:     c.buckets,
			ConstLabels: c.constLabels,
		}, []string{"result"}),
		state: prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "ratelimit_breaker_state",
			Help:        "State of the rate limiter's circuit breaker: 0 closed, 1 open, 2 half-open.",
			ConstLabels: c.constLabels,
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "ratelimit_breaker_transitions_total",
			Help:        "Changes of the rate limiter's circuit breaker state.",
			ConstLabels: c.constLabels,
		}, []string{"from", "to"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name:        "ratelimit_in_flight",
			Help:        "Leases of concurrency limits held by requests this process admitted and has not released yet, by tier and limit.",
			ConstLabels: c.constLabels,
		}, []string{"tier", "limit"}),
		tierErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "ratelimit_tier_errors_total",
			Help:        "Requests whose tier resolver failed or named an unknown tier, by the tier applied and whether it was the last known one (stale) or the default.",
			ConstLabels: c.constLabels,
		}, []string{"tier", "result"}),
		overrides: prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "ratelimit_active_overrides",
			Help:        "Clients with an override of their limits in force, as the node's copy of the controls holds them.",
			ConstLabels: c.constLabels,
		}),
		blocks: prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "ratelimit_active_blocks",
			Help:        "Clients an operator blocked, block in force, as the node's copy of the controls holds them.",
			ConstLabels: c.constLabels,
		}),
		lockouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "ratelimit_lockouts_total",
			Help:        "Takes the store answered locked out (a limit's lockout holds the client), by tier and limit: about one per lockout per node with the deny cache on.",
			ConstLabels: c.constLabels,
		}, []string{"tier", "limit"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "ratelimit_policy_reloads_total",
			Help:        "Policies reported to the limiter, by result: ok (applied) or failed (refused, the old one still applies).",
			ConstLabels: c.constLabels,
		}, []string{"result"}),
		routes: &routeSet{max: c.maxRoutes},
	}, nil
}

// MustNew is like [New] but panics on an invalid option.
func MustNew(opts ...Option) *Collector {
	c, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return c
}

// Describe implements [prometheus.Collector].
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.requests.Describe(ch)
	c.latency.Describe(ch)
	c.state.Describe(ch)
	c.transitions.Describe(ch)
	c.inFlight.Describe(ch)
	c.tierErrors.Describe(ch)
	c.overrides.Describe(ch)
	c.blocks.Describe(ch)
	c.lockouts.Describe(ch)
	c.reloads.Describe(ch)
}

// Collect implements [prometheus.Collector].
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.requests.Collect(ch)
	c.latency.Collect(ch)
	c.state.Collect(ch)
	c.transitions.Collect(ch)
	c.inFlight.Collect(ch)
	c.tierErrors.Collect(ch)
	c.overrides.Collect(ch)
	c.blocks.Collect(ch)
	c.lockouts.Collect(ch)
	c.reloads.Collect(ch)
}

// Decided implements [core.Observer]: it counts res under its tier, its
// binding limit ([core.Result.Binding]: the limit that denied, or the one
// closest to exhaustion), the route template of req ([core.Request].Route,
// capped by [WithMaxRoutes]) and its result. When res holds a lease
// ([core.Result].Lease), it raises ratelimit_in_flight of every
// [core.Concurrency] limit of the tier by one, until [Collector.Released]
// (a lease never given to [core.Limiter.Release] stays counted, and
// remembered, as it stays held). A request whose tier resolver failed
// ([core.Result].TierErr) also counts in ratelimit_tier_errors_total.
func (c *Collector) Decided(_ context.Context, req core.Request, res core.Result) {
	route := c.routes.label(req.Route)
	c.requests.WithLabelValues(res.Tier, res.Binding().Limit.Name, route, result(res)).Inc()
	if res.TierErr != nil {
		c.tierErrors.WithLabelValues(res.Tier, tierResult(res.TierErr)).Inc()
	}
	if res.Lease != nil {
		c.leased(res)
	}
}

// leased raises the in-flight gauge of each Concurrency limit of res and
// remembers which, for Released.
func (c *Collector) leased(res core.Result) {
	var raised []prometheus.Gauge
	for i := range res.Len() {
		if l := res.Decision(i).Limit; l.Algorithm == core.Concurrency {
			g := c.inFlight.WithLabelValues(res.Tier, l.Name)
			g.Inc()
			raised = append(raised, g)
		}
	}
	c.leases.Store(res.Lease, raised)
}

// Released implements [core.ReleaseObserver]: it lowers the in-flight
// gauges that [Collector.Decided] raised for the lease of res, whether the
// store gave the lease back or not (err != nil: the lease then expires
// after its TTL in the store, but this process no longer runs its
// request). A lease this Collector did not see taken, or saw released
// already, changes nothing, so the gauge is never negative.
func (c *Collector) Released(_ context.Context, res core.Result, _ error) {
	if res.Lease == nil {
		return
	}
	raised, ok := c.leases.LoadAndDelete(res.Lease)
	if !ok {
		return
	}
	for _, g := range raised.([]prometheus.Gauge) {
		g.Dec()
	}
}

// BreakerChanged implements [core.Observer]: it sets the state gauge and
// counts the transition.
func (c *Collector) BreakerChanged(from, to core.BreakerState) {
	c.state.Set(stateValue(to))
	c.transitions.WithLabelValues(from.String(), to.String()).Inc()
}

// Values of the result label of ratelimit_policy_reloads_total.
const (
	// ReloadOK: a new policy was applied.
	ReloadOK = "ok"
	// ReloadFailed: a new policy was refused; the old one still applies.
	ReloadFailed = "failed"
)

// Controlled implements [core.ControlObserver]: it counts lockouts (by
// tier and the limit that locked) and policy reloads (by result). Both
// label sets are bounded: tiers and limits are the limiter's, and a
// reload is ok or failed.
func (c *Collector) Controlled(_ context.Context, ev core.ControlEvent) {
	switch ev.Kind {
	case core.ControlLockedOut:
		c.lockouts.WithLabelValues(ev.Tier, firstOr(ev.Limits, "")).Inc()
	case core.ControlReloaded:
		c.reloads.WithLabelValues(ReloadOK).Inc()
	case core.ControlReloadFailed:
		c.reloads.WithLabelValues(ReloadFailed).Inc()
	}
}

// ControlsActive implements [core.ControlObserver]: it sets the gauges of
// the overrides and blocks in force, as the limiter's node last read them.
func (c *Collector) ControlsActive(overrides, blocks int) {
	c.overrides.Set(float64(overrides))
	c.blocks.Set(float64(blocks))
}

// firstOr returns ss[0], or or when ss is empty.
func firstOr(ss []string, or string) string {
	if len(ss) == 0 {
		return or
	}
	return ss[0]
}

// result returns the result label of res.
func result(res core.Result) string {
	switch {
	case res.Degraded && res.Allowed:
		return ResultDegradedAllowed
	case res.Degraded:
		return ResultDegradedDenied
	case res.Shadowed:
		return ResultShadowDenied
	case res.Allowed:
		return ResultAllowed
	}
	return ResultDenied
}

// Values of the result label of ratelimit_tier_errors_total.
const (
	// TierStale: the resolver failed and the last tier it named for the
	// key was kept ([core.WithTierStale]).
	TierStale = "stale"
	// TierDefault: the resolver failed (or named an unknown tier) and the
	// default tier applied.
	TierDefault = "default"
)

// tierResult returns the result label of a request whose tier resolver
// failed with err.
func tierResult(err error) string {
	if errors.Is(err, core.ErrTierStale) {
		return TierStale
	}
	return TierDefault
}

// stateValue returns the gauge value of s: 0 closed, 1 open, 2 half-open.
func stateValue(s core.BreakerState) float64 {
	switch s {
	case core.BreakerOpen:
		return 1
	case core.BreakerHalfOpen:
		return 2
	}
	return 0
}
