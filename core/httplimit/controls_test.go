package httplimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// staticControls is a memory store whose space holds fixed control
// records, written once: enough for the middleware to meet blocked,
// exempt and overridden clients.
type staticControls struct {
	*memstore.Store
	records []core.ControlEntry
}

func (s staticControls) Controls(context.Context, string, uint64) (core.ControlChanges, error) {
	return core.ControlChanges{Gen: 1, Full: true, Records: s.records, Now: middlewareNow}, nil
}

func (staticControls) SetControl(context.Context, string, string, []byte, time.Time) (uint64, error) {
	return 0, nil
}
func (staticControls) TouchControl(context.Context, string, string) (uint64, error) { return 0, nil }
func (staticControls) DeleteKeys(context.Context, []string) (int64, error)          { return 0, nil }

// controlledMiddleware returns a middleware keyed by the X-Client header
// over a limiter whose clients "blocked", "exempt" and "vip" are blocked
// for an hour, exempt and overridden.
func controlledMiddleware(t *testing.T) *httplimit.Middleware {
	t.Helper()
	record := func(id string, r core.ControlRecord) core.ControlEntry {
		v, err := json.Marshal(r)
		require.NoError(t, err)
		return core.ControlEntry{ID: id, Value: v, Expires: middlewareNow.Add(24 * time.Hour)}
	}
	mem, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	store := staticControls{Store: mem, records: []core.ControlEntry{
		record("blocked", core.ControlRecord{Block: &core.Block{Until: middlewareNow.Add(time.Hour), Reason: "ops secret: ticket 1234"}}),
		record("exempt", core.ControlRecord{Exempt: &core.Exempt{Reason: "uptime probe"}}),
		record("vip", core.ControlRecord{Override: &core.Override{Limits: []core.Limit{core.PerMinute(500).WithName("minute")}}}),
	}}
	l, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(2).WithName("minute")))
	require.NoError(t, err)
	mw, err := httplimit.New(l, httplimit.WithKey(func(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil }),
		httplimit.WithHeaders(httplimit.HeadersIETF|httplimit.HeadersLegacy))
	require.NoError(t, err)
	return mw
}

func serveAs(mw *httplimit.Middleware, client string) (*httptest.ResponseRecorder, bool) {
	ran := false
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }), func(*http.Request) string { return "/" })
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Client", client)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, ran
}

// A blocked client gets 429 with Retry-After until the block ends and the
// fixed problem type "blocked"; the operator's reason never reaches it.
func TestMiddlewareBlockedClient(t *testing.T) {
	w, ran := serveAs(controlledMiddleware(t), "blocked")

	assert.False(t, ran)
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "3600", w.Header().Get("Retry-After"))
	assert.Equal(t, `"minute";r=0;t=3600`, w.Header().Get("RateLimit"))
	assert.Equal(t, "3600", w.Header().Get("RateLimit-Reset"))
	assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	var p httplimit.Problem
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
	assert.Equal(t, httplimit.ProblemBlocked, p.Type)
	assert.EqualValues(t, 3600, p.RetryAfter)
	assert.NotContains(t, w.Body.String(), "ticket")
	assert.NotContains(t, w.Body.String(), "ops secret")
}

// An exempt client's request goes through, every time, with the fields
// of a full quota.
func TestMiddlewareExemptClient(t *testing.T) {
	mw := controlledMiddleware(t)
	for range 5 { // more than the limit's 2 a minute
		w, ran := serveAs(mw, "exempt")
		assert.True(t, ran)
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, `"minute";r=2;t=0`, w.Header().Get("RateLimit"))
		assert.Empty(t, w.Header().Get("Retry-After"))
	}
}

// An overridden client's fields describe its own limits, not its tier's.
func TestMiddlewareOverriddenClient(t *testing.T) {
	mw := controlledMiddleware(t)
	w, ran := serveAs(mw, "vip")
	require.True(t, ran)
	assert.Equal(t, `"minute";q=500;w=60`, w.Header().Get("RateLimit-Policy"))
	assert.Equal(t, "499", w.Header().Get("RateLimit-Remaining"))

	w, _ = serveAs(mw, "someone")
	assert.Equal(t, `"minute";q=2;w=60`, w.Header().Get("RateLimit-Policy"), "another client: the tier's")
}
