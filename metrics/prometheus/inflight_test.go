package ratelimitprom_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

// inFlight returns the values of ratelimit_in_flight of c, by "tier/limit".
func inFlight(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	values := map[string]float64{}
	for _, f := range gather(t, c, "ratelimit_in_flight") {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			values[labels["tier"]+"/"+labels["limit"]] = m.GetGauge().GetValue()
		}
	}
	return values
}

// exportLimiter returns a limiter over a memory store whose tier "export"
// allows two requests in flight ("exports") and 100 a minute ("minute").
func exportLimiter(t *testing.T, store core.Store, metrics *ratelimitprom.Collector) *core.Limiter {
	t.Helper()
	l, err := core.NewLimiter(store,
		core.WithTier("export", core.Concurrent(2).WithName("exports"), core.PerMinute(100).WithName("minute")),
		core.WithDefaultTier("export"),
		core.WithObserver(metrics))
	require.NoError(t, err)
	return l
}

func TestCollectorInFlightGoesUpOnAdmitAndDownOnRelease(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	l := exportLimiter(t, newMemstore(t, storetest.NewClock()), metrics)
	ctx := context.Background()
	req := core.Request{Identity: "203.0.113.7", Cost: 1, Route: "/export"}

	first, err := l.Take(ctx, req)
	require.NoError(t, err)
	second, err := l.Take(ctx, req)
	require.NoError(t, err)
	require.NotNil(t, first.Lease)
	require.NotNil(t, second.Lease)
	assert.Equal(t, map[string]float64{"export/exports": 2}, inFlight(t, metrics), "two leases held")

	denied, err := l.Take(ctx, req)
	require.NoError(t, err)
	require.False(t, denied.Allowed)
	assert.Equal(t, map[string]float64{"export/exports": 2}, inFlight(t, metrics), "a denial holds no lease")

	require.NoError(t, l.Release(ctx, first))
	assert.Equal(t, map[string]float64{"export/exports": 1}, inFlight(t, metrics), "one released")
	require.NoError(t, l.Release(ctx, first))
	require.NoError(t, l.Release(ctx, denied))
	assert.Equal(t, map[string]float64{"export/exports": 1}, inFlight(t, metrics), "a second release and a release of a denial change nothing")
	require.NoError(t, l.Release(ctx, second))
	assert.Equal(t, map[string]float64{"export/exports": 0}, inFlight(t, metrics), "all released")
}

func TestCollectorCountsAConcurrencyDenialUnderItsLimit(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	l := exportLimiter(t, newMemstore(t, storetest.NewClock()), metrics)

	takeN(t, l, "/export", "203.0.113.7", 3) // two leases, then the in-flight limit binds

	want := `
ratelimit_requests_total{limit="exports",result="allowed",route="/export",tier="export"} 2
ratelimit_requests_total{limit="exports",result="denied",route="/export",tier="export"} 1
`
	assert.Equal(t, expect(requestsHeader+want), collectText(t, metrics, "ratelimit_requests_total"))
}

func TestCollectorInFlightComesDownWhenTheHandlerPanics(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	l := exportLimiter(t, newMemstore(t, storetest.NewClock()), metrics)
	var during map[string]float64
	h := ratelimithttp.New(l)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		during = inFlight(t, metrics)
		panic("handler bug")
	}))

	recovered := func() (v any) {
		defer func() { v = recover() }()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/export", nil))
		return nil
	}()

	assert.Equal(t, "handler bug", recovered, "the panic goes on through the middleware")
	assert.Equal(t, map[string]float64{"export/exports": 1}, during, "the request held a lease while it ran")
	assert.Equal(t, map[string]float64{"export/exports": 0}, inFlight(t, metrics), "the lease was released after the panic")
}

// failingRelease is a memory store whose Release always fails.
type failingRelease struct{ *memstore.Store }

var errReleaseDown = errors.New("release: store down")

func (failingRelease) Release(context.Context, string, core.Limit, string) error {
	return errReleaseDown
}

func TestCollectorInFlightComesDownWhenTheReleaseFails(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	l := exportLimiter(t, failingRelease{newMemstore(t, storetest.NewClock())}, metrics)
	ctx := context.Background()

	res, err := l.Take(ctx, core.Request{Identity: "203.0.113.7", Cost: 1})
	require.NoError(t, err)
	require.NotNil(t, res.Lease)
	assert.Equal(t, map[string]float64{"export/exports": 1}, inFlight(t, metrics))

	require.ErrorIs(t, l.Release(ctx, res), errReleaseDown)
	assert.Equal(t, map[string]float64{"export/exports": 0}, inFlight(t, metrics),
		"the request is over on this node, though its lease waits for its TTL in the store")
}

func TestCollectorInFlightIgnoresLeasesItDidNotSeeTaken(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	other := exportLimiter(t, newMemstore(t, storetest.NewClock()), ratelimitprom.MustNew())
	res, err := other.Take(context.Background(), core.Request{Identity: "203.0.113.7", Cost: 1})
	require.NoError(t, err)
	require.NotNil(t, res.Lease)

	metrics.Released(context.Background(), res, nil)
	metrics.Released(context.Background(), core.Result{Tier: "export"}, nil)

	assert.Empty(t, inFlight(t, metrics), "no gauge raised, none lowered below zero")
}

func TestCollectorInFlightUnderConcurrency(t *testing.T) {
	const clients, goroutines, takes = 4, 8, 50
	metrics := ratelimitprom.MustNew()
	l := exportLimiter(t, newMemstore(t, storetest.NewClock()), metrics)
	ctx := context.Background()

	stop := make(chan struct{})
	scraped := make(chan []float64)
	go func() { // scrapes while the requests run
		var seen []float64
		defer func() { scraped <- seen }()
		for {
			select {
			case <-stop:
				return
			default:
				seen = append(seen, inFlight(t, metrics)["export/exports"])
			}
		}
	}()

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			identity := []string{"a", "b", "c", "d"}[g%clients]
			for range takes {
				res, err := l.Take(ctx, core.Request{Identity: identity, Cost: 1})
				if !assert.NoError(t, err) {
					return
				}
				_ = l.Release(ctx, res)
				_ = l.Release(ctx, res) // twice: counted once
			}
		}()
	}
	wg.Wait()
	close(stop)

	for _, v := range <-scraped {
		require.GreaterOrEqual(t, v, 0.0, "never negative")
		require.LessOrEqual(t, v, float64(2*clients), "at most the limit of every client")
	}
	assert.Equal(t, map[string]float64{"export/exports": 0}, inFlight(t, metrics), "every lease released")
}

func TestCollectorInFlightCountsEveryConcurrencyLimitOfTheTier(t *testing.T) {
	metrics := ratelimitprom.MustNew()
	l, err := core.NewLimiter(newMemstore(t, storetest.NewClock()),
		core.WithTier("upload", core.Concurrent(2).WithName("uploads"), core.Concurrent(5).WithLeaseTTL(time.Hour),
			core.PerSecond(10).WithName("per-second")),
		core.WithDefaultTier("upload"),
		core.WithObserver(metrics))
	require.NoError(t, err)
	ctx := context.Background()

	res, err := l.Take(ctx, core.Request{Identity: "203.0.113.7", Cost: 1})
	require.NoError(t, err)
	require.NotNil(t, res.Lease)
	assert.Equal(t, map[string]float64{"upload/uploads": 1, "upload/5-in-flight": 1}, inFlight(t, metrics),
		"one series per concurrency limit, the unnamed one under its derived name; none for the rate limit")

	require.NoError(t, l.Release(ctx, res))
	assert.Equal(t, map[string]float64{"upload/uploads": 0, "upload/5-in-flight": 0}, inFlight(t, metrics))
}
