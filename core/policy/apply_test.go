package policy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/policy"
)

func fw(name string, rate int64, period time.Duration) core.Limit {
	return core.Limit{Name: name, Rate: rate, Period: period, Algorithm: core.FixedWindow}
}

// twoLimiters returns limiters "api" and "login", each with one fixed
// window limit of 5 per minute.
func twoLimiters(t *testing.T) map[string]*core.Limiter {
	return map[string]*core.Limiter{
		"api":   frozenLimiter(t, core.WithTier("free", fw("m", 5, time.Minute))),
		"login": frozenLimiter(t, core.WithLimits(fw("attempts", 5, time.Minute))),
	}
}

const applyDoc = `version: 1
limiters:
  api:
    default_tier: pro
    tiers:
      free:
        - {name: m, rate: 10, period: 1m, algorithm: fixed_window}
      pro:
        - {name: m, rate: 100, period: 1m, algorithm: fixed_window}
  login:
    tiers:
      default:
        - {name: attempts, rate: 3, period: 1m, algorithm: fixed_window}
`

// Apply gives each limiter its tiers; the counters of kept limits carry
// over.
func TestApply(t *testing.T) {
	limiters := twoLimiters(t)
	allow(t, limiters["api"], "a", 4)
	require.NoError(t, policy.Apply(mustParse(t, applyDoc), limiters))

	assert.Equal(t, []string{"free", "pro"}, limiters["api"].Tiers())
	assert.Equal(t, "pro", limiters["api"].DefaultTier())
	res := allow(t, limiters["api"], "a", 1)
	assert.True(t, res.Allowed)
	assert.EqualValues(t, 100-5, res.Binding().Remaining, "4 before, 1 after, in pro (the default now)")
	limits, _ := limiters["login"].Tier("default")
	assert.Equal(t, []core.Limit{fw("attempts", 3, time.Minute)}, limits)
}

// Whatever one limiter refuses, no limiter changes; the error names the
// file, the line and the limiter.
func TestApplyIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		limiters func(map[string]*core.Limiter)
		want     string
	}{
		{"a concurrency limit the limiter never had", applyDoc + "        - {name: e, rate: 2, algorithm: concurrency}\n", nil,
			`p.yaml:10: limiters.login: tier "default": limit "e" is a Concurrency limit, and the limiter had none: front ends built without one release no leases; build a new limiter (restart) to add it`},
		{"a limiter the policy does not describe", applyDoc, func(m map[string]*core.Limiter) {
			m["hook"] = frozenLimiter(t, core.WithLimits(core.PerSecond(1)))
		}, `ratelimit: policy: p.yaml describes no limiter "hook", which the application has (it describes "api" and "login")`},
		{"a limiter the application does not have", applyDoc, func(m map[string]*core.Limiter) { delete(m, "login") },
			`p.yaml:10: limiters.login: the application has no limiter "login" (it has "api"); when another service applies it, give its name a nil *core.Limiter`},
		{"one limiter under two names", applyDoc, func(m map[string]*core.Limiter) { m["login"] = m["api"] },
			`ratelimit: policy: limiters "api" and "login" are one *core.Limiter: each name needs its own`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limiters := twoLimiters(t)
			if tt.limiters != nil {
				tt.limiters(limiters)
			}
			err := policy.Apply(mustParse(t, tt.doc), limiters)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			limits, ok := limiters["api"].Tier("free")
			require.True(t, ok)
			assert.Equal(t, []core.Limit{fw("m", 5, time.Minute)}, limits, "api keeps its tiers")
			assert.Equal(t, []string{"free"}, limiters["api"].Tiers())
		})
	}
}

// A window limit whose period changes is applied: the stores read its
// stored window in the new period (TestAGrownWindowKeepsItsCount).
func TestApplyTakesAWindowThatGrows(t *testing.T) {
	limiters := twoLimiters(t)
	doc := applyDoc[:len(applyDoc)-len("1m, algorithm: fixed_window}\n")] + "1h, algorithm: fixed_window}\n"
	require.NoError(t, policy.Apply(mustParse(t, doc), limiters))
	limits, ok := limiters["login"].Tier("default")
	require.True(t, ok)
	assert.Equal(t, []core.Limit{fw("attempts", 3, time.Hour)}, limits)
}

// A limiter another service applies is named with a nil *core.Limiter.
func TestApplySkipsLimitersOfOtherServices(t *testing.T) {
	limiters := twoLimiters(t)
	login := limiters["login"]
	limiters["login"] = nil
	require.NoError(t, policy.Apply(mustParse(t, applyDoc), limiters))
	assert.Equal(t, []string{"free", "pro"}, limiters["api"].Tiers())
	limits, _ := login.Tier("default")
	assert.Equal(t, []core.Limit{fw("attempts", 5, time.Minute)}, limits, "untouched")
}

// A document of one limiter describes the limiter named "".
func TestApplyOneLimiterDocument(t *testing.T) {
	l := frozenLimiter(t, core.WithLimits(core.PerSecond(1)))
	p := mustParse(t, "version: 1\ntiers:\n  gold:\n    - {rate: 7, period: 1s}\n")
	require.NoError(t, policy.Apply(p, map[string]*core.Limiter{"": l}))
	assert.Equal(t, []string{"gold"}, l.Tiers())
}
