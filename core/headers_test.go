package core_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/sftest"
)

// headerNow has a fractional second, so epoch rounding shows.
var headerNow = time.Date(2025, 1, 2, 3, 4, 5, 250_000_000, time.UTC)

var (
	perSecond = core.PerSecond(10).WithBurst(100).WithName("per-second")
	daily     = core.PerDay(1000).WithName("daily")
)

func TestSetHeaders(t *testing.T) {
	allowed := core.NewResult(
		core.Decision{Limit: perSecond, Allowed: true, Remaining: 99, ResetAfter: 100 * time.Millisecond},
		core.Decision{Limit: daily, Allowed: true, Remaining: 950, ResetAfter: 4320 * time.Second},
	)
	exhausted := core.NewResult(
		core.Decision{Limit: perSecond, Reason: core.Exhausted, ResetAfter: 10 * time.Second, RetryAfter: 1500 * time.Millisecond},
		core.Decision{Limit: daily, Allowed: true, Remaining: 950, ResetAfter: 4320 * time.Second},
	)
	tooCostly := core.NewResult(
		core.Decision{Limit: perSecond, Reason: core.CostTooHigh, Remaining: 40, ResetAfter: 6 * time.Second},
	)
	subSecondRetry := core.NewResult(
		core.Decision{Limit: perSecond, Reason: core.Exhausted, ResetAfter: 10 * time.Second, RetryAfter: time.Microsecond},
	)
	failOpen := core.NewResult(core.Decision{Limit: perSecond, Allowed: true, Remaining: 100})
	failOpen.Degraded = true
	failClosed := core.NewResult(core.Decision{Limit: perSecond, Reason: core.Exhausted, Remaining: 100, RetryAfter: time.Second})
	failClosed.Degraded = true
	shadowed := exhausted
	shadowed.Allowed, shadowed.Shadowed = true, true

	tests := []struct {
		name    string
		res     core.Result
		formats core.HeaderFormat
		want    http.Header
	}{
		{"allowed, ietf: policy per limit, binding limit", allowed, core.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1, "daily";q=1000;w=86400`},
			"Ratelimit":        {`"per-second";r=99;t=1`},
		}},
		{"allowed, legacy: capacity, delta reset", allowed, core.HeadersLegacy, http.Header{
			"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"99"}, "Ratelimit-Reset": {"1"},
		}},
		{"allowed, x-ratelimit: epoch reset rounded up", allowed, core.HeadersXRateLimit, http.Header{
			"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"99"}, "X-Ratelimit-Reset": {"1735787046"},
		}},
		{"allowed, off", allowed, core.HeadersOff, http.Header{}},
		{"exhausted, all: reset is the retry delay, Retry-After rounded up", exhausted,
			core.HeadersIETF | core.HeadersLegacy | core.HeadersXRateLimit, http.Header{
				"Ratelimit-Policy":      {`"per-second";q=10;w=1, "daily";q=1000;w=86400`},
				"Ratelimit":             {`"per-second";r=0;t=2`},
				"Ratelimit-Limit":       {"100"},
				"Ratelimit-Remaining":   {"0"},
				"Ratelimit-Reset":       {"2"},
				"X-Ratelimit-Limit":     {"100"},
				"X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset":     {"1735787047"},
				"Retry-After":           {"2"},
			}},
		{"exhausted, off: Retry-After still sent", exhausted, core.HeadersOff, http.Header{"Retry-After": {"2"}}},
		{"retry under a second: at least 1", subSecondRetry, core.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1`},
			"Ratelimit":        {`"per-second";r=0;t=1`},
			"Retry-After":      {"1"},
		}},
		{"cost too high: no Retry-After, reset until full", tooCostly, core.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1`},
			"Ratelimit":        {`"per-second";r=40;t=6`},
		}},
		{"degraded, failing open: policy only", failOpen, core.HeadersIETF | core.HeadersLegacy | core.HeadersXRateLimit, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1`},
		}},
		{"degraded, failing closed: policy and Retry-After", failClosed, core.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1`},
			"Retry-After":      {"1"},
		}},
		{"shadowed: state as the limits see it, no Retry-After", shadowed, core.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1, "daily";q=1000;w=86400`},
			"Ratelimit":        {`"per-second";r=0;t=2`},
		}},
		{"no decisions: nothing", core.Result{}, core.HeadersIETF, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			core.SetHeaders(h, tt.res, tt.formats, headerNow)
			assert.Equal(t, tt.want, h)
		})
	}
}

func TestSetHeadersReplacesValues(t *testing.T) {
	h := http.Header{"Ratelimit": {"stale"}, "Retry-After": {"99"}}
	res := core.NewResult(core.Decision{Limit: perSecond, Reason: core.Exhausted, RetryAfter: time.Second})

	core.SetHeaders(h, res, core.HeadersIETF, headerNow)

	assert.Equal(t, []string{`"per-second";r=0;t=1`}, h.Values("RateLimit"))
	assert.Equal(t, []string{"1"}, h.Values("Retry-After"))
}

// TestSetHeadersParse checks the IETF fields with a strict RFC 9651 parser,
// item by item, as a client would read them.
func TestSetHeadersParse(t *testing.T) {
	everyThird := core.Every(3 * time.Minute).WithName("every.3m")
	halfSecond := core.Limit{Name: "fast_1", Rate: 5, Period: 500 * time.Millisecond}
	res := core.NewResult(
		core.Decision{Limit: everyThird, Allowed: true, Remaining: 0, ResetAfter: 179*time.Second + time.Nanosecond},
		core.Decision{Limit: halfSecond, Allowed: true, Remaining: 4, ResetAfter: 100 * time.Millisecond},
	)
	h := http.Header{}
	core.SetHeaders(h, res, core.HeadersIETF, headerNow)

	policy, err := sftest.ParseList(h.Values("RateLimit-Policy")...)
	require.NoError(t, err)
	require.Len(t, policy, 2)
	assertItem(t, policy[0], "every.3m", map[string]int64{"q": 1, "w": 180})
	// w rounds up: 5 per 0.5 s is advertised as 5 per second, never faster.
	assertItem(t, policy[1], "fast_1", map[string]int64{"q": 5, "w": 1})

	limit, err := sftest.ParseList(h.Values("RateLimit")...)
	require.NoError(t, err)
	require.Len(t, limit, 1)
	assertItem(t, limit[0], "every.3m", map[string]int64{"r": 0, "t": 180})
}

// assertItem checks that it is a String item named name with exactly the
// Integer parameters params.
func assertItem(t *testing.T, it sftest.Item, name string, params map[string]int64) {
	t.Helper()
	assert.Equal(t, sftest.BareItem{Kind: sftest.String, Str: name}, it.Value)
	got := map[string]int64{}
	for _, p := range it.Params {
		assert.Equal(t, sftest.Integer, p.Value.Kind, "parameter %s", p.Key)
		got[p.Key] = p.Value.Int
	}
	assert.Equal(t, params, got)
}

func TestHeaderFormatString(t *testing.T) {
	tests := []struct {
		f    core.HeaderFormat
		want string
	}{
		{core.HeadersOff, "off"},
		{core.HeadersIETF, "ietf"},
		{core.HeadersIETF | core.HeadersXRateLimit, "ietf|x-ratelimit"},
		{core.HeadersLegacy | 0x80, "legacy|HeaderFormat(128)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.f.String())
		})
	}
}
