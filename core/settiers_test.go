package core_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
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

// heldStore holds the next Take once hold is set, until release is
// closed: a take in flight while the tiers change.
type heldStore struct {
	core.Store
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *heldStore) Capabilities() core.Capabilities { return core.CapabilitiesOf(s.Store) }

func (s *heldStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	if s.hold.CompareAndSwap(true, false) {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.Store.Take(ctx, dst, keys, limits, cost)
}

// A take decided under the old tiers that ends after SetTiers caches its
// denial; that denial must not answer the requests the new tiers decide.
func TestSetTiersOutrunsADenialInFlight(t *testing.T) {
	ctx := context.Background()
	hourly := func(n int64) []core.Tier {
		return []core.Tier{{Name: "default", Limits: []core.Limit{core.PerHour(n).WithName("h").WithAlgorithm(core.FixedWindow)}}}
	}
	inner, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	s := &heldStore{Store: inner, entered: make(chan struct{}), release: make(chan struct{})}
	l, err := core.NewLimiter(s, core.WithTiers(hourly(1)...))
	require.NoError(t, err)
	res, err := l.Allow(ctx, "a")
	require.NoError(t, err)
	require.True(t, res.Allowed)

	s.hold.Store(true)
	inFlight := make(chan core.Result)
	go func() {
		res, _ := l.Allow(ctx, "a")
		inFlight <- res
	}()
	<-s.entered
	require.NoError(t, l.SetTiers(hourly(5), ""))
	close(s.release)
	require.False(t, (<-inFlight).Allowed, "decided under the old tiers")

	res, err = l.Allow(ctx, "a")
	require.NoError(t, err)
	assert.True(t, res.Allowed, "the new tiers decide, not the old tiers' denial cached after they went")
	assert.EqualValues(t, 5, res.Decision(0).Limit.Rate)
}

// Nor may it answer, in the new tiers' place, the requests of the client
// whose tier is not resolved yet (new lookup keys, past the few the deny
// cache lets through to the resolver).
func TestSetTiersOutrunsADenialInFlightForUnresolvedRequests(t *testing.T) {
	ctx := context.Background()
	hourly := func(n int64) []core.Tier {
		return []core.Tier{{Name: "free", Limits: []core.Limit{core.PerHour(n).WithName("h").WithAlgorithm(core.FixedWindow)}}}
	}
	inner, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	s := &heldStore{Store: inner, entered: make(chan struct{}), release: make(chan struct{})}
	free := func(context.Context, string) (string, error) { return "free", nil }
	l, err := core.NewLimiter(s, core.WithTiers(hourly(1)...), core.WithTierResolver(free, time.Hour, 100))
	require.NoError(t, err)
	take := func(key string) core.Result {
		res, err := l.Take(ctx, core.Request{Identity: "a", TierKey: key, Cost: 1})
		require.NoError(t, err)
		return res
	}
	require.True(t, take("k0").Allowed)

	s.hold.Store(true)
	inFlight := make(chan core.Result)
	go func() { inFlight <- take("k0") }()
	<-s.entered
	require.NoError(t, l.SetTiers(hourly(100), ""))
	close(s.release)
	require.False(t, (<-inFlight).Allowed, "decided under the old tiers")

	for i := 1; i <= 12; i++ {
		res := take(fmt.Sprintf("k%d", i))
		assert.True(t, res.Allowed, "a new key of the client (%d): the new tiers decide", i)
	}
}
