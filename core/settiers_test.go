package core_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// A limit kept by name keeps the client's usage across SetTiers; a renamed
// one starts afresh. (Fixed windows count requests, so the usage reads as a
// count under the new rate; a GCRA keeps a time, read at the new rate.)
func TestSetTiersKeepsTheUsageOfKeptLimits(t *testing.T) {
	ctx := context.Background()
	fw := func(n int64, name string) core.Limit {
		return core.PerMinute(n).WithName(name).WithAlgorithm(core.FixedWindow)
	}
	l := newTestLimiter(t, core.WithLimits(fw(5, "kept"), fw(5, "renamed")))
	for range 3 {
		res, err := l.Allow(ctx, "a")
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}
	require.NoError(t, l.SetTiers([]core.Tier{{Name: "default", Limits: []core.Limit{
		fw(10, "kept"), fw(10, "fresh")}}}, ""))
	res, err := l.Allow(ctx, "a")
	require.NoError(t, err)
	require.True(t, res.Allowed)
	assert.EqualValues(t, 10-4, res.Decision(0).Remaining, "kept: 3 before the reload, 1 after")
	assert.EqualValues(t, 10-1, res.Decision(1).Remaining, "fresh: only the take after the reload")
}

// A raised limit applies at once to a client this node had denied: the
// cached denial goes with the old tiers.
func TestSetTiersDropsCachedDenials(t *testing.T) {
	ctx := context.Background()
	l := newTestLimiter(t, core.WithLimits(core.PerHour(1).WithName("h").WithAlgorithm(core.FixedWindow)))
	_, err := l.Allow(ctx, "a")
	require.NoError(t, err)
	res, err := l.Allow(ctx, "a")
	require.NoError(t, err)
	require.False(t, res.Allowed)
	require.NoError(t, l.SetTiers([]core.Tier{{Name: "default", Limits: []core.Limit{core.PerHour(5).WithName("h").WithAlgorithm(core.FixedWindow)}}}, ""))
	res, err = l.Allow(ctx, "a")
	require.NoError(t, err)
	assert.True(t, res.Allowed, "the raised limit admits: no cached denial of the old tiers answers")
}

// Invalid tiers are refused with the field named, and the old ones stay.
func TestSetTiersRefusesInvalidTiersAndKeepsTheOld(t *testing.T) {
	l := newTestLimiter(t, core.WithTier("free", core.PerMinute(5).WithName("m")))
	for _, c := range []struct {
		name  string
		tiers []core.Tier
		def   string
		want  string
	}{
		{"empty", nil, "", "tiers must not be empty"},
		{"bad rate", []core.Tier{{Name: "free", Limits: []core.Limit{{Name: "m", Rate: 0, Period: time.Second}}}}, "", "Rate"},
		{"duplicate tier", []core.Tier{{Name: "free", Limits: []core.Limit{core.PerSecond(1)}}, {Name: "free", Limits: []core.Limit{core.PerSecond(1)}}}, "", "duplicate tier"},
		{"unknown default", []core.Tier{{Name: "free", Limits: []core.Limit{core.PerSecond(1)}}}, "pro", `default tier "pro"`},
		{"first concurrency limit", []core.Tier{{Name: "free", Limits: []core.Limit{core.Concurrent(2)}}}, "", "had none"},
	} {
		err := l.SetTiers(c.tiers, c.def)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	lim, ok := l.Tier("free")
	require.True(t, ok)
	assert.EqualValues(t, 5, lim[0].Rate, "the old tiers stay in force")
}

// Decisions made while the tiers change apply one set or the other, never
// a mix: both limits of a decision come from the same set.
func TestSetTiersNeverMixes(t *testing.T) {
	ctx := context.Background()
	tiers := func(rate int64) []core.Tier {
		return []core.Tier{{Name: "default", Limits: []core.Limit{
			core.PerSecond(rate).WithName("a"), core.PerMinute(rate).WithName("b")}}}
	}
	l := newTestLimiter(t, core.WithTiers(tiers(1000)...))
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mixed, decided atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				res, err := l.Allow(ctx, string(rune('a'+g)))
				if err != nil {
					t.Error(err)
					return
				}
				decided.Add(1)
				if res.Decision(0).Limit.Rate != res.Decision(1).Limit.Rate {
					mixed.Add(1)
				}
			}
		}()
	}
	for i := range 2000 {
		require.NoError(t, l.SetTiers(tiers(int64(1000+i%2)), ""))
	}
	stop.Store(true)
	wg.Wait()
	assert.Positive(t, decided.Load())
	assert.Zero(t, mixed.Load(), "decisions with limits of two sets")
}

// ValidateTiers refuses what SetTiers refuses for the tiers themselves,
// without a limiter, and takes what it takes.
func TestValidateTiers(t *testing.T) {
	tests := []struct {
		name  string
		tiers []core.Tier
		def   string
		want  string // "" : valid
	}{
		{"valid, default first", []core.Tier{{Name: "free", Limits: []core.Limit{core.PerSecond(1)}}}, "", ""},
		{"valid, default named", []core.Tier{{Name: "free", Limits: []core.Limit{core.PerSecond(1)}}, {Name: "pro", Limits: []core.Limit{core.PerSecond(2)}}}, "pro", ""},
		{"a concurrency limit: the store is not known", []core.Tier{{Name: "free", Limits: []core.Limit{core.Concurrent(2)}}}, "", ""},
		{"empty", nil, "", "tiers must not be empty"},
		{"bad rate", []core.Tier{{Name: "free", Limits: []core.Limit{{Name: "m", Rate: 0, Period: time.Second}}}}, "", "Rate"},
		{"bad tier name", []core.Tier{{Name: "fr ee", Limits: []core.Limit{core.PerSecond(1)}}}, "", "tier Name"},
		{"duplicate limit", []core.Tier{{Name: "free", Limits: []core.Limit{core.PerSecond(1), core.PerSecond(1)}}}, "", "duplicate limit Name"},
		{"duplicate tier", []core.Tier{{Name: "free", Limits: []core.Limit{core.PerSecond(1)}}, {Name: "free", Limits: []core.Limit{core.PerSecond(1)}}}, "", "duplicate tier"},
		{"unknown default", []core.Tier{{Name: "free", Limits: []core.Limit{core.PerSecond(1)}}}, "pro", `default tier "pro"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := core.ValidateTiers(tt.tiers, tt.def)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
