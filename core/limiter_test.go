package core

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingStore answers every limit with allowed (or err) and records the
// calls. The limiter's policy is what these tests check; store semantics are
// checked by core/storetest against real stores.
type recordingStore struct {
	mu    sync.Mutex
	calls []recordedCall
	err   error
	deny  map[string]bool  // limit name -> deny
	now   func() time.Time // the store's clock (Capabilities), nil for none
}

// Capabilities implements Capable: the limiter's caches follow the store's
// clock.
func (s *recordingStore) Capabilities() Capabilities { return Capabilities{Clock: s.now} }

type recordedCall struct {
	keys   []string
	limits []Limit
	cost   int64
}

func (s *recordingStore) Take(_ context.Context, dst []Decision, keys []string, limits []Limit, cost int64) ([]Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, recordedCall{keys: cloneKeys(keys), limits: limits, cost: cost})
	if s.err != nil {
		return dst, s.err
	}
	for _, l := range limits {
		d := Decision{Limit: l, Allowed: !s.deny[l.Name], Remaining: l.Capacity() - cost}
		if !d.Allowed {
			d.Reason, d.RetryAfter, d.Remaining = Exhausted, l.Interval(), 0
		}
		dst = append(dst, d)
	}
	return dst, nil
}

func (s *recordingStore) lastCall(t *testing.T) recordedCall {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.calls, "store was never called")
	return s.calls[len(s.calls)-1]
}

func TestNewLimiterRejectsBadConfiguration(t *testing.T) {
	store := &recordingStore{}
	tests := []struct {
		name  string
		store Store
		opts  []Option
		field string // the error must name it
	}{
		{"nil store", nil, []Option{WithLimits(PerSecond(1))}, "store"},
		{"no tiers", store, nil, "tiers"},
		{"zero rate", store, []Option{WithLimits(PerSecond(0))}, "Rate"},
		{"negative rate", store, []Option{WithLimits(PerSecond(-5))}, "Rate"},
		{"zero period", store, []Option{WithLimits(Limit{Rate: 1})}, "Period"},
		{"negative period", store, []Option{WithLimits(Limit{Rate: 1, Period: -time.Second})}, "Period"},
		{"negative burst", store, []Option{WithLimits(PerSecond(1).WithBurst(-1))}, "Burst"},
		{"burst on a fixed window", store, []Option{WithLimits(PerSecond(10).WithBurst(20).WithAlgorithm(FixedWindow))}, "Burst"},
		{"unknown algorithm", store, []Option{WithLimits(PerSecond(1).WithAlgorithm(Algorithm(42)))}, "Algorithm"},
		{"rate beyond 1 per µs", store, []Option{WithLimits(Limit{Rate: 2000, Period: time.Millisecond})}, "Period"},
		{"name with a brace", store, []Option{WithLimits(PerSecond(1).WithName("a}b"))}, "Name"},
		{"name too long", store, []Option{WithLimits(PerSecond(1).WithName(strings.Repeat("n", 33)))}, "Name"},
		{"duplicate limit names", store, []Option{WithLimits(PerSecond(1).WithName("x"), PerMinute(5).WithName("x"))}, "duplicate limit Name"},
		{"duplicate derived names", store, []Option{WithLimits(PerSecond(1), PerSecond(1).WithBurst(5))}, "duplicate limit Name"},
		{"empty tier", store, []Option{WithTier("free")}, "Limits"},
		{"empty tier name", store, []Option{WithTier("", PerSecond(1))}, "tier Name"},
		{"duplicate tiers", store, []Option{WithTier("a", PerSecond(1)), WithTier("a", PerSecond(2))}, "duplicate tier Name"},
		{"unknown default tier", store, []Option{WithTier("a", PerSecond(1)), WithDefaultTier("b")}, "default tier"},
		{"prefix with a brace", store, []Option{WithLimits(PerSecond(1)), WithPrefix("rl{x}")}, "key prefix"},
		{"empty prefix", store, []Option{WithLimits(PerSecond(1)), WithPrefix("")}, "key prefix"},
		{"nil resolver", store, []Option{WithLimits(PerSecond(1)), WithTierResolver(nil, 0, 0)}, "resolver"},
		{"negative resolver ttl", store, []Option{WithLimits(PerSecond(1)), WithTierResolver(constTier("a"), -1, 0)}, "ttl"},
		{"unknown failure mode", store, []Option{WithLimits(PerSecond(1)), WithFailureMode(9)}, "failure mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLimiter(tt.store, tt.opts...)
			require.Error(t, err)
			assert.Nil(t, l)
			assert.Contains(t, err.Error(), tt.field)
			assert.True(t, strings.HasPrefix(err.Error(), "ratelimit: "), err.Error())
		})
	}
}

func TestMustNewLimiterPanicsOnBadConfiguration(t *testing.T) {
	assert.PanicsWithError(t, "ratelimit: tiers must not be empty: use WithLimits, WithTier or WithTiers", func() {
		MustNewLimiter(&recordingStore{})
	})
}

func constTier(name string) TierResolver {
	return func(context.Context, string) (string, error) { return name, nil }
}

func TestLimiterTakesEveryLimitOfTheTierInOneCall(t *testing.T) {
	store := &recordingStore{}
	l, err := NewLimiter(store, WithLimits(PerSecond(10).WithName("sec"), PerDay(10_000).WithName("day").WithAlgorithm(FixedWindow)))
	require.NoError(t, err)

	res, err := l.AllowN(context.Background(), "203.0.113.7", 3)
	require.NoError(t, err)

	assert.True(t, res.Allowed)
	assert.Equal(t, "default", res.Tier)
	require.Equal(t, 2, res.Len())
	call := store.lastCall(t)
	assert.Equal(t, []string{"rl:{203.0.113.7}:sec:g", "rl:{203.0.113.7}:day:f"}, call.keys)
	assert.Equal(t, int64(3), call.cost)
	assert.Len(t, store.calls, 1)
}

func TestLimiterResultIsDeniedWhenAnyLimitDenies(t *testing.T) {
	store := &recordingStore{deny: map[string]bool{"day": true}}
	l := MustNewLimiter(store, WithLimits(PerSecond(10).WithName("sec"), PerDay(100).WithName("day")))

	res, err := l.Allow(context.Background(), "c")
	require.NoError(t, err)

	assert.False(t, res.Allowed)
	assert.Equal(t, "day", res.Binding().Limit.Name)
}

func TestLimiterPicksTheTier(t *testing.T) {
	tiers := RecipeTiers()
	failing := func(context.Context, string) (string, error) { return "", errors.New("db down") }
	tests := []struct {
		name        string
		opts        []Option
		req         Request
		wantTier    string
		wantTierErr string
	}{
		{"no tier named: default (first)", nil, Request{Identity: "a", Cost: 1}, "free", ""},
		{"named tier", nil, Request{Identity: "a", Tier: "pro", Cost: 1}, "pro", ""},
		{"unknown named tier: default and an error", nil, Request{Identity: "a", Tier: "gold", Cost: 1}, "free", `unknown tier "gold"`},
		{"resolver", []Option{WithTierResolver(constTier("enterprise"), 0, 0)}, Request{Identity: "a", Cost: 1}, "enterprise", ""},
		{"resolver says unknown tier", []Option{WithTierResolver(constTier("gold"), 0, 0)}, Request{Identity: "a", Cost: 1}, "free", `unknown tier "gold"`},
		{"resolver fails", []Option{WithTierResolver(failing, 0, 0)}, Request{Identity: "a", Cost: 1}, "free", "db down"},
		{"named tier wins over resolver", []Option{WithTierResolver(constTier("enterprise"), 0, 0)}, Request{Identity: "a", Tier: "pro", Cost: 1}, "pro", ""},
		{"explicit default tier", []Option{WithDefaultTier("pro")}, Request{Identity: "a", Cost: 1}, "pro", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &recordingStore{}
			l := MustNewLimiter(store, append([]Option{WithTiers(tiers...)}, tt.opts...)...)

			res, err := l.Take(context.Background(), tt.req)

			require.NoError(t, err)
			assert.Equal(t, tt.wantTier, res.Tier)
			want, _ := l.Tier(tt.wantTier)
			assert.Equal(t, want, store.lastCall(t).limits)
			if tt.wantTierErr == "" {
				assert.NoError(t, res.TierErr)
			} else {
				assert.ErrorContains(t, res.TierErr, tt.wantTierErr)
			}
		})
	}
}

func TestTierResolverAnswersAreCachedForTheirTTL(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := 0
	resolve := func(_ context.Context, id string) (string, error) {
		calls++
		return "pro", nil
	}
	l := MustNewLimiter(&recordingStore{now: func() time.Time { return now }}, WithTiers(RecipeTiers()...),
		WithTierResolver(resolve, time.Minute, 10))
	ctx := context.Background()

	for range 3 {
		_, err := l.Allow(ctx, "key-1")
		require.NoError(t, err)
	}
	assert.Equal(t, 1, calls, "within the TTL")

	now = now.Add(time.Minute)
	_, err := l.Allow(ctx, "key-1")
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "after the TTL")
}

func TestTierResolverErrorsAreNotCached(t *testing.T) {
	calls := 0
	resolve := func(context.Context, string) (string, error) {
		calls++
		return "", errors.New("db down")
	}
	l := MustNewLimiter(&recordingStore{}, WithTiers(RecipeTiers()...), WithTierResolver(resolve, time.Minute, 10))
	for range 2 {
		res, err := l.Allow(context.Background(), "k")
		require.NoError(t, err)
		assert.Error(t, res.TierErr)
	}
	assert.Equal(t, 2, calls)
}

func TestTierCacheStaysBoundedUnderIdentityRotation(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newTierCache(tierConfig{resolve: constTier("pro"), ttl: time.Hour, size: 100, timeout: time.Minute},
		"free", func() time.Time { return now })
	for i := range 10_000 {
		id := "id-" + strconv.Itoa(i)
		tier, err := c.tier(context.Background(), tierKeyHash(id), id)
		require.NoError(t, err)
		require.Equal(t, "pro", tier)
	}
	assert.Equal(t, 100, c.len())
}

func TestLimiterRejectsNegativeCost(t *testing.T) {
	store := &recordingStore{}
	l := MustNewLimiter(store, WithLimits(PerSecond(1)))

	_, err := l.AllowN(context.Background(), "a", -1)

	assert.ErrorIs(t, err, ErrInvalidCost)
	assert.Empty(t, store.calls)
}

func TestLimiterStoreFailure(t *testing.T) {
	tests := []struct {
		name        string
		mode        FailureMode
		wantAllowed bool
	}{
		{"fail open admits", FailOpen, true},
		{"fail closed denies", FailClosed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &recordingStore{err: errDown}
			l := MustNewLimiter(store, WithLimits(PerSecond(1)), WithFailureMode(tt.mode))

			res, err := l.Allow(context.Background(), "a")

			require.NoError(t, err, "a store failure is reported in the Result")
			assert.Equal(t, tt.wantAllowed, res.Allowed)
			assert.True(t, res.Degraded)
			assert.ErrorIs(t, res.Err, store.err)
			require.Equal(t, 1, res.Len())
			assert.Equal(t, tt.wantAllowed, res.Decision(0).Allowed)
		})
	}
}

func TestLimiterHashesHostileIdentitiesIntoTheHashTag(t *testing.T) {
	store := &recordingStore{}
	l := MustNewLimiter(store, WithLimits(PerSecond(1).WithName("s")))

	_, err := l.Allow(context.Background(), "evil}{slot}\x00")
	require.NoError(t, err)

	key := store.lastCall(t).keys[0]
	assert.Equal(t, "rl:{"+SafeIdentity("evil}{slot}\x00")+"}:s:g", key)
	assert.Equal(t, 1, strings.Count(key, "{"))
	assert.Equal(t, 1, strings.Count(key, "}"))
}

// cloneKeys copies keys, bytes included: the keys a NonBlocking store gets
// live only for the call.
func cloneKeys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strings.Clone(k)
	}
	return out
}
