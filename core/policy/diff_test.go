package policy_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/policy"
)

func mustParse(t *testing.T, doc string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse("p.yaml", []byte(doc))
	require.NoError(t, err)
	return p
}

const diffOld = `version: 1
limiters:
  api:
    default_tier: free
    tiers:
      free:
        - {name: burst, rate: 10, period: 1s, burst: 100}
        - {name: daily, rate: 1000, period: 24h, algorithm: fixed_window}
        - {name: hourly, rate: 100, period: 1h, algorithm: fixed_window}
      enterprise:
        - {name: burst, rate: 1000, period: 1s}
  hook:
    tiers:
      default:
        - {name: webhook, rate: 100, period: 10s, algorithm: sliding_window}
  gone:
    tiers:
      default:
        - {name: x, rate: 1, period: 1s}
`

const diffNew = `version: 1
limiters:
  api:
    default_tier: pro
    tiers:
      free:
        - {name: burst, rate: 20, period: 1s, burst: 200}
        - {name: hourly, rate: 100, period: 1h, algorithm: sliding_window}
        - {name: monthly, rate: 10000, calendar: month, zone: Europe/Madrid}
      pro:
        - {name: burst, rate: 100, period: 1s}
  hook:
    tiers:
      default:
        - {name: webhook, rate: 100, period: 10s, algorithm: sliding_window}
  added:
    tiers:
      default:
        - {name: y, rate: 1, period: 1s}
`

// The report says, per limiter and tier, what changes, and which counters
// are kept, new, restarted or dropped; an unchanged limiter is not named.
func TestDiffReport(t *testing.T) {
	c := policy.Diff(mustParse(t, diffOld), mustParse(t, diffNew))
	assert.Equal(t, `limiter api
  default tier: free -> pro
  tier free
    ~ burst: rate 10 -> 20, burst 100 -> 200
    ~ hourly: algorithm fixed_window -> sliding_window
    + monthly (10000 per calendar month in Europe/Madrid)
    - daily (1000 per 24h, fixed_window)
  + tier pro
    + burst (100 per 1s, gcra)
  - tier enterprise (a client the resolver puts in it gets the default tier)
    - burst (1000 per 1s, gcra)
  counters
    kept     burst (gcra): each client's usage carries over as time owed, read at the new rate
    new      hourly (sliding_window): the algorithm was fixed_window: another algorithm keeps other state, so every client starts from a full quota
    new      monthly (calendar_window): every client starts from a full quota
    dropped  daily (fixed_window): no tier has the limit now; its counters expire unread
    dropped  hourly (fixed_window): counted as sliding_window now; this state expires unread
+ limiter added: added
  + tier default
    + y (1 per 1s, gcra)
  counters
    new      y (gcra): every client starts from a full quota
- limiter gone: removed
  - tier default (a client the resolver puts in it gets the default tier)
    - x (1 per 1s, gcra)
  counters
    dropped  x (gcra): no tier has the limit now; its counters expire unread
`, c.String())
}

func TestDiffOfOnePolicyIsEmpty(t *testing.T) {
	c := policy.Diff(mustParse(t, diffOld), mustParse(t, diffOld))
	assert.True(t, c.Empty())
	assert.Equal(t, "no changes\n", c.String())
}

// What becomes of the counters of a limit kept by name and algorithm
// depends on what its algorithm stores.
func TestDiffCounterFates(t *testing.T) {
	doc := func(limit string) string { return "version: 1\ntiers:\n  t:\n    - " + limit + "\n" }
	tests := []struct {
		name     string
		old, new string
		want     policy.Fate
		why      string // part of the reason
	}{
		{"window grows", "{name: w, rate: 10, period: 1s, algorithm: fixed_window}", "{name: w, rate: 10, period: 1m, algorithm: fixed_window}", policy.CountersKept, "carries over into the 1m window that holds the start of its last 1s window"},
		{"sliding window grows", "{name: w, rate: 10, period: 1s, algorithm: sliding_window}", "{name: w, rate: 10, period: 2s, algorithm: sliding_window}", policy.CountersKept, "else the client starts from a full quota"},
		{"window shrinks", "{name: w, rate: 10, period: 1m, algorithm: fixed_window}", "{name: w, rate: 10, period: 1s, algorithm: fixed_window}", policy.CountersRestart, "except that a count carries over into the 1s window that holds the start of its 1m window"},
		{"window rate changes", "{name: w, rate: 10, period: 1m, algorithm: fixed_window}", "{name: w, rate: 20, period: 1m, algorithm: fixed_window}", policy.CountersKept, "count carries over"},
		{"log grows", "{name: w, rate: 10, period: 1s, algorithm: sliding_log}", "{name: w, rate: 10, period: 1m, algorithm: sliding_log}", policy.CountersKept, "holds only the requests of the last 1s"},
		{"calendar zone", "{name: c, rate: 10, calendar: day, zone: UTC}", "{name: c, rate: 10, calendar: day, zone: Europe/Madrid}", policy.CountersRestart, "starts where the old one did"},
		{"gcra period", "{name: g, rate: 10, period: 1s}", "{name: g, rate: 10, period: 1m}", policy.CountersKept, "time owed"},
		{"lease TTL", "{name: e, rate: 2, algorithm: concurrency}", "{name: e, rate: 2, algorithm: concurrency, period: 1m}", policy.CountersKept, "leases in flight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := policy.Diff(mustParse(t, doc(tt.old)), mustParse(t, doc(tt.new)))
			require.Len(t, c.Limiters, 1)
			require.Len(t, c.Limiters[0].Counters, 1)
			cc := c.Limiters[0].Counters[0]
			assert.Equal(t, tt.want, cc.Fate, cc.Why)
			assert.Contains(t, cc.Why, tt.why)
		})
	}
}

// A fixed or sliding window whose period grows keeps the count of a client
// whose stored window started in the current window of the new period:
// frozen is 03:04:05, so the 3 taken in second 03:04:05 are minute 03:04's,
// and the client is denied until the minute's end (fixed window) or until
// the estimate falls to the rate (sliding window: (60s − 5s) + 60s −
// 9·60s/10 = 61s), not for years as when the stores read the stored window
// number as one of minutes.
func TestAGrownWindowKeepsItsCount(t *testing.T) {
	tests := []struct {
		alg   core.Algorithm
		retry time.Duration
	}{
		{core.FixedWindow, 55 * time.Second},
		{core.SlidingWindow, 61 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.alg.String(), func(t *testing.T) {
			l := frozenLimiter(t, core.WithLimits(core.Limit{Name: "w", Rate: 10, Period: time.Second, Algorithm: tt.alg}))
			allow(t, l, "a", 3)
			require.NoError(t, l.SetTiers([]core.Tier{{Name: "default", Limits: []core.Limit{
				{Name: "w", Rate: 10, Period: time.Minute, Algorithm: tt.alg}}}}, ""))
			res := allow(t, l, "a", 7)
			require.True(t, res.Allowed, "7 more fit the minute")
			assert.Equal(t, int64(0), res.Binding().Remaining)
			res = allow(t, l, "a", 1)
			require.False(t, res.Allowed, "the 3 of the old window count in the minute")
			assert.Equal(t, tt.retry, res.Binding().RetryAfter)
		})
	}
}

// Two tiers may give a window limit of one name different periods: a
// client moved from one to the other keeps its count where its stored
// window started in the current window of its new tier's period.
func TestTiersMayGiveOneWindowNameTwoPeriods(t *testing.T) {
	p := mustParse(t, "version: 1\ntiers:\n  free:\n    - {name: w, rate: 10, period: 1s, algorithm: fixed_window}\n"+
		"  pro:\n    - {name: w, rate: 20, period: 1m, algorithm: fixed_window}\n")
	tiers, def, ok := p.Limiter("")
	require.True(t, ok)
	l := frozenLimiter(t, core.WithTiers(tiers...), core.WithDefaultTier(def))
	take := func(tier string) core.Result {
		res, err := l.Take(context.Background(), core.Request{Identity: "a", Tier: tier, Cost: 1})
		require.NoError(t, err)
		return res
	}
	for range 10 {
		require.True(t, take("free").Allowed)
	}
	res := take("pro")
	require.True(t, res.Allowed)
	assert.Equal(t, int64(9), res.Binding().Remaining, "the 10 of second 03:04:05 count in minute 03:04")
}
