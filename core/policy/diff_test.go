package policy_test

import (
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
	assert.Empty(t, c.Misread())
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
		{"window grows", "{name: w, rate: 10, period: 1s, algorithm: fixed_window}", "{name: w, rate: 10, period: 1m, algorithm: fixed_window}", policy.CountersMisread, "ends years from now"},
		{"sliding window grows", "{name: w, rate: 10, period: 1s, algorithm: sliding_window}", "{name: w, rate: 10, period: 2s, algorithm: sliding_window}", policy.CountersMisread, "rename the limit"},
		{"window shrinks", "{name: w, rate: 10, period: 1m, algorithm: fixed_window}", "{name: w, rate: 10, period: 1s, algorithm: fixed_window}", policy.CountersRestart, "window numbers differ"},
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
			assert.Equal(t, tt.want == policy.CountersMisread, len(c.Misread()) == 1)
		})
	}
}

// The reason Apply refuses a window that grows: the stores read the stored
// window number as one of the new length, a window that ends in decades,
// and deny the client until then. Should the stores learn to tell, this
// test fails, and Apply and Parse may stop refusing such a change.
func TestAGrownWindowIsMisreadByTheStores(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		t.Run(alg.String(), func(t *testing.T) {
			l := frozenLimiter(t, core.WithLimits(core.Limit{Name: "w", Rate: 10, Period: time.Second, Algorithm: alg}))
			allow(t, l, "a", 3)
			require.NoError(t, l.SetTiers([]core.Tier{{Name: "default", Limits: []core.Limit{
				{Name: "w", Rate: 10, Period: time.Minute, Algorithm: alg}}}}, ""))
			var res core.Result
			for range 10 {
				res = allow(t, l, "a", 1)
			}
			require.False(t, res.Allowed, "7 more fit the new window")
			assert.Greater(t, res.Binding().RetryAfter, 365*24*time.Hour, "denied for years")
		})
	}
}
