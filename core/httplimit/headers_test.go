package httplimit_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
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
	inFlight := core.Concurrent(2)
	oneInFlight := core.NewResult(core.Decision{Limit: inFlight, Allowed: true, Remaining: 1, ResetAfter: 30 * time.Second})
	noneInFlight := core.NewResult(core.Decision{Limit: inFlight, Allowed: true, Remaining: 2})
	allInFlight := core.NewResult(core.Decision{Limit: inFlight, Reason: core.Exhausted, ResetAfter: 29 * time.Second, RetryAfter: 400 * time.Millisecond})

	tests := []struct {
		name    string
		res     core.Result
		formats httplimit.HeaderFormat
		want    http.Header
	}{
		{"allowed, ietf: policy per limit, binding limit", allowed, httplimit.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1, "daily";q=1000;w=86400`},
			"Ratelimit":        {`"per-second";r=99;t=1`},
		}},
		{"allowed, legacy: capacity, delta reset", allowed, httplimit.HeadersLegacy, http.Header{
			"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"99"}, "Ratelimit-Reset": {"1"},
		}},
		{"allowed, x-ratelimit: epoch reset rounded up", allowed, httplimit.HeadersXRateLimit, http.Header{
			"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"99"}, "X-Ratelimit-Reset": {"1735787046"},
		}},
		{"allowed, off", allowed, httplimit.HeadersOff, http.Header{}},
		{"exhausted, all: reset is the retry delay, Retry-After rounded up", exhausted,
			httplimit.HeadersIETF | httplimit.HeadersLegacy | httplimit.HeadersXRateLimit, http.Header{
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
		{"exhausted, off: Retry-After still sent", exhausted, httplimit.HeadersOff, http.Header{"Retry-After": {"2"}}},
		{"retry under a second: at least 1", subSecondRetry, httplimit.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1`},
			"Ratelimit":        {`"per-second";r=0;t=1`},
			"Retry-After":      {"1"},
		}},
		{"cost too high: no Retry-After, t until the next request is back", tooCostly, httplimit.HeadersIETF | httplimit.HeadersLegacy, http.Header{
			"Ratelimit-Policy":    {`"per-second";q=10;w=1`},
			"Ratelimit":           {`"per-second";r=40;t=1`},
			"Ratelimit-Limit":     {"100"},
			"Ratelimit-Remaining": {"40"},
			"Ratelimit-Reset":     {"6"}, // legacy: until the quota is full again
		}},
		{"degraded, failing open: policy only", failOpen, httplimit.HeadersIETF | httplimit.HeadersLegacy | httplimit.HeadersXRateLimit, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1`},
		}},
		{"degraded, failing closed: policy and Retry-After", failClosed, httplimit.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1`},
			"Retry-After":      {"1"},
		}},
		{"shadowed: state as the limits see it, no Retry-After", shadowed, httplimit.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1, "daily";q=1000;w=86400`},
			"Ratelimit":        {`"per-second";r=0;t=2`},
		}},
		{"concurrency, admitted: t is the estimate of a place freed, not the lease TTL", oneInFlight, httplimit.HeadersIETF | httplimit.HeadersLegacy, http.Header{
			"Ratelimit-Policy":    {`"2-in-flight";q=2;qu="concurrency"`},
			"Ratelimit":           {`"2-in-flight";r=1;t=1`},
			"Ratelimit-Limit":     {"2"},
			"Ratelimit-Remaining": {"1"},
			"Ratelimit-Reset":     {"30"}, // legacy: until the newest lease expires
		}},
		{"concurrency, nothing in flight: t=0", noneInFlight, httplimit.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"2-in-flight";q=2;qu="concurrency"`},
			"Ratelimit":        {`"2-in-flight";r=2;t=0`},
		}},
		{"concurrency, denied: t and Retry-After the estimate, at least 1", allInFlight, httplimit.HeadersIETF, http.Header{
			"Ratelimit-Policy": {`"2-in-flight";q=2;qu="concurrency"`},
			"Ratelimit":        {`"2-in-flight";r=0;t=1`},
			"Retry-After":      {"1"},
		}},
		{"no decisions: nothing", core.Result{}, httplimit.HeadersIETF, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			httplimit.SetHeaders(h, tt.res, tt.formats, headerNow)
			assert.Equal(t, tt.want, h)
		})
	}
}

func TestSetHeadersReplacesValues(t *testing.T) {
	h := http.Header{"Ratelimit": {"stale"}, "Retry-After": {"99"}}
	res := core.NewResult(core.Decision{Limit: perSecond, Reason: core.Exhausted, RetryAfter: time.Second})

	httplimit.SetHeaders(h, res, httplimit.HeadersIETF, headerNow)

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
	httplimit.SetHeaders(h, res, httplimit.HeadersIETF, headerNow)

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
		f    httplimit.HeaderFormat
		want string
	}{
		{httplimit.HeadersOff, "off"},
		{httplimit.HeadersIETF, "ietf"},
		{httplimit.HeadersIETF | httplimit.HeadersXRateLimit, "ietf|x-ratelimit"},
		{httplimit.HeadersLegacy | 0x80, "legacy|HeaderFormat(128)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.f.String())
		})
	}
}

// TestSetHeadersSyntax writes every format for results of each kind and
// parses each field by the syntax its specification gives: the IETF fields
// as RFC 9651 Lists of the items draft-ietf-httpapi-ratelimit-headers-11
// defines, the legacy fields as the sf-integers of drafts 02-06,
// X-RateLimit-* and Retry-After as digits (Unix seconds, delay-seconds).
func TestSetHeadersSyntax(t *testing.T) {
	window := core.PerMinute(30).WithAlgorithm(core.FixedWindow).WithName("per.minute")
	degraded := func(r core.Result) core.Result { r.Degraded, r.Fallback = true, true; return r }
	results := map[string]core.Result{
		"allowed": core.NewResult(
			core.Decision{Limit: perSecond, Allowed: true, Remaining: 99, ResetAfter: 100 * time.Millisecond},
			core.Decision{Limit: window, Allowed: true, Remaining: 3, ResetAfter: 59*time.Second + time.Microsecond},
		),
		"exhausted": core.NewResult(
			core.Decision{Limit: perSecond, Allowed: true, Remaining: 40, ResetAfter: 6 * time.Second},
			core.Decision{Limit: window, Reason: core.Exhausted, ResetAfter: 20 * time.Second, RetryAfter: 20 * time.Second},
		),
		"cost too high": core.NewResult(
			core.Decision{Limit: perSecond, Reason: core.CostTooHigh, Remaining: 100},
		),
		"fallback": degraded(core.NewResult(
			core.Decision{Limit: window, Reason: core.Exhausted, ResetAfter: time.Second, RetryAfter: 500 * time.Millisecond},
		)),
	}
	all := httplimit.HeadersIETF | httplimit.HeadersLegacy | httplimit.HeadersXRateLimit
	for name, res := range results {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			httplimit.SetHeaders(h, res, all, headerNow)

			policy, err := sftest.ParseList(h.Values("RateLimit-Policy")...)
			require.NoError(t, err)
			require.Len(t, policy, res.Len(), "one policy item per limit")
			for i, it := range policy {
				assert.Equal(t, sftest.BareItem{Kind: sftest.String, Str: res.Decision(i).Limit.EffectiveName()}, it.Value)
				assertParams(t, it, map[string]int64{"q": 0, "w": 1}, "q", "w")
			}

			limit, err := sftest.ParseList(h.Values("RateLimit")...)
			require.NoError(t, err)
			require.Len(t, limit, 1, "one service limit item: the binding limit")
			assert.Equal(t, sftest.BareItem{Kind: sftest.String, Str: res.Binding().Limit.EffectiveName()}, limit[0].Value)
			assertParams(t, limit[0], map[string]int64{"r": 0, "t": 0}, "r")

			for _, field := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
				items, err := sftest.ParseList(h.Values(field)...)
				require.NoError(t, err, field)
				require.Len(t, items, 1, field)
				assert.Equal(t, sftest.Integer, items[0].Value.Kind, field)
				assert.GreaterOrEqual(t, items[0].Value.Int, int64(0), field)
				assert.Empty(t, items[0].Params, field)
			}

			for _, field := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
				assertDigits(t, h, field)
			}
			reset, _ := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
			assert.GreaterOrEqual(t, reset, headerNow.Unix(), "X-RateLimit-Reset is a Unix time, not a delay")

			if res.Allowed || res.Binding().Reason == core.CostTooHigh {
				assert.Empty(t, h.Values("Retry-After"))
				return
			}
			retry := assertDigits(t, h, "Retry-After") // delay-seconds, RFC 9110 section 10.2.3
			assert.GreaterOrEqual(t, retry, int64(1))
		})
	}
}

// assertParams checks that every parameter of it is one of the Integer
// parameters of floors, at least its floor, and that the required ones are
// present.
func assertParams(t *testing.T, it sftest.Item, floors map[string]int64, required ...string) {
	t.Helper()
	for _, p := range it.Params {
		lo, known := floors[p.Key]
		if assert.True(t, known, "unexpected parameter %q", p.Key) {
			assert.Equal(t, sftest.Integer, p.Value.Kind, "parameter %s", p.Key)
			assert.GreaterOrEqual(t, p.Value.Int, lo, "parameter %s", p.Key)
		}
	}
	for _, key := range required {
		_, ok := it.Param(key)
		assert.True(t, ok, "missing required parameter %q", key)
	}
}

// assertDigits checks that field is one line of 1*DIGIT and returns it.
func assertDigits(t *testing.T, h http.Header, field string) int64 {
	t.Helper()
	vs := h.Values(field)
	require.Len(t, vs, 1, field)
	assert.Regexp(t, `^[0-9]+$`, vs[0], field)
	n, err := strconv.ParseInt(vs[0], 10, 64)
	require.NoError(t, err, field)
	return n
}

// TestRateLimitTMeansMoreQuota checks RateLimit's t against the store, as
// drafts -10 and -11 define it: after t seconds more quota is available.
// Random takes on the memory store, for every algorithm; after each, the
// clock moves on by t and a peek must see more remaining than the take
// left, and for the algorithms whose decisions say when quota comes back,
// not a second sooner. Legacy RateLimit-Reset keeps its meaning: after
// it, the limit is full.
func TestRateLimitTMeansMoreQuota(t *testing.T) {
	for _, alg := range []core.Algorithm{core.GCRA, core.TokenBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		t.Run(alg.String(), func(t *testing.T) {
			now := headerNow
			store, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
			require.NoError(t, err)
			limits := []core.Limit{{Name: "l", Rate: 12, Period: 3 * time.Second, Burst: 12, Algorithm: alg}}
			if alg != core.GCRA && alg != core.TokenBucket {
				limits[0].Burst = 0
			}
			keys := []string{"rl:{t}:l:" + alg.Tag()}
			// peek returns the remaining quota at the instant at, charging
			// nothing. Peeks go forward in time: one past the state's
			// expiry drops it, and the takes go on as a new client's.
			peek := func(at time.Time) int64 {
				defer func(was time.Time) { now = was }(now)
				now = at
				ds, err := store.Take(context.Background(), nil, keys, limits, 0)
				require.NoError(t, err)
				return ds[0].Remaining
			}
			// t is exact (the next request back within its last second)
			// where the decision says when quota comes back; the sliding
			// algorithms report the full reset, later than the truth.
			tight := alg == core.GCRA || alg == core.TokenBucket || alg == core.FixedWindow
			checked := 0
			rng := rand.New(rand.NewPCG(9, uint64(alg)))
			for i := range 300 {
				now = now.Add(time.Duration(rng.IntN(500_000)) * time.Microsecond)
				ds, err := store.Take(context.Background(), nil, keys, limits, int64(1+rng.IntN(4)))
				require.NoError(t, err)
				d := ds[0]
				if !d.Allowed || d.Remaining == limits[0].Capacity() {
					continue
				}
				h := http.Header{}
				httplimit.SetHeaders(h, core.NewResult(ds...), httplimit.HeadersIETF|httplimit.HeadersLegacy, now)
				items, err := sftest.ParseList(h.Values("RateLimit")...)
				require.NoError(t, err)
				tp, ok := items[0].Param("t")
				require.True(t, ok)
				reset, err := strconv.ParseInt(h.Get("RateLimit-Reset"), 10, 64)
				require.NoError(t, err)
				require.LessOrEqual(t, tp.Int, reset, "take %d: t is never after the full reset", i)

				if tight && tp.Int > 0 {
					sooner := peek(now.Add(time.Duration(tp.Int-1) * time.Second))
					assert.Equal(t, d.Remaining, sooner, "take %d: %s, more quota already %d s later", i, h.Get("RateLimit"), tp.Int-1)
				}
				later := peek(now.Add(time.Duration(tp.Int) * time.Second))
				assert.Greater(t, later, d.Remaining, "take %d: %s, no more quota %d s later", i, h.Get("RateLimit"), tp.Int)
				checked++
				full := peek(now.Add(time.Duration(reset) * time.Second))
				assert.Equal(t, limits[0].Capacity(), full, "take %d: not full %d s later", i, reset)
			}
			assert.Greater(t, checked, 100, "most takes leave a partial quota to check")
		})
	}
}
