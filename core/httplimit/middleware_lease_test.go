package httplimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// peekInFlight is what a peek reports in flight for client under the
// concurrency limit at index i of its tier.
func peekInFlight(t *testing.T, l *core.Limiter, client string, i int) int64 {
	t.Helper()
	res, err := l.AllowN(context.Background(), client, 0)
	require.NoError(t, err)
	return res.Decision(i).InFlight()
}

// The middleware gives a request's lease back after its handler, when the
// handler returns and when it panics, before a user's WithFinish runs; a
// denied request holds none.
func TestMiddlewareReleasesTheLeaseAfterTheHandler(t *testing.T) {
	const client = "192.0.2.1"
	l := newTestLimiter(t, core.WithLimits(core.PerMinute(100), core.Concurrent(1)))
	var during, finished []int64
	m, err := httplimit.New(l, httplimit.WithFinish(func(*http.Request, httplimit.Outcome, int) {
		finished = append(finished, peekInFlight(t, l, client, 1))
	}))
	require.NoError(t, err)
	route := func(*http.Request) string { return "" }
	serve := func(h http.Handler) int {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = client + ":40000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	var nested int
	var inner http.Handler
	outer := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		during = append(during, peekInFlight(t, l, client, 1))
		nested = serve(inner) // a second request of the client while this one runs
	}), route)
	inner = m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), route)
	panicking := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), route)

	assert.True(t, m.Finishes(), "a concurrency limit is work after the handler")
	assert.Equal(t, http.StatusOK, serve(outer))
	assert.Equal(t, http.StatusTooManyRequests, nested, "one in flight at most")
	assert.PanicsWithValue(t, "boom", func() { serve(panicking) })
	assert.Equal(t, http.StatusOK, serve(inner), "the panicking request gave its place back")
	assert.Equal(t, []int64{1}, during, "the lease is held while the handler runs")
	assert.Equal(t, []int64{0, 0, 0}, finished, "released before WithFinish: after the return, the panic and the last request")
	assert.Equal(t, int64(0), peekInFlight(t, l, client, 1))
}

// WithChargeIf checks a request without taking it: with a concurrency
// limit nothing would count the request in flight, so the two are an error
// at construction, naming both.
func TestChargeIfAndAConcurrencyLimitContradict(t *testing.T) {
	l := newTestLimiter(t, core.WithTiers(
		core.Tier{Name: "free", Limits: []core.Limit{core.PerMinute(5)}},
		core.Tier{Name: "pro", Limits: []core.Limit{core.PerMinute(50), core.Concurrent(4).WithName("running")}},
	), core.WithDefaultTier("free"))
	_, err := httplimit.New(l, httplimit.WithChargeIf(httplimit.FailedRequests))
	require.Error(t, err)
	for _, want := range []string{"WithChargeIf", `Concurrency limit "running"`, `tier "pro"`, "contradict"} {
		assert.Contains(t, err.Error(), want)
	}
}
