package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

// The lockout state lives under its own key and expires with the later of
// its counting window and its cool-down, as the Redis program's PEXPIRE:
// an idle client costs no memory afterwards.
func TestLockoutStateExpires(t *testing.T) {
	clock := storetest.NewClock()
	s, err := New(WithClock(clock.Now))
	require.NoError(t, err)
	ctx := context.Background()
	lo := core.Lockout{After: 2, Within: time.Minute, For: time.Hour, Cooldown: 2 * time.Hour}
	limits := []core.Limit{core.PerDay(1).WithName("login").WithLockout(lo)}
	keys := []string{"rl:{alice}:login:g"}
	take := func(want core.Reason) {
		t.Helper()
		ds, err := s.Take(ctx, nil, keys, limits, 1)
		require.NoError(t, err)
		require.Equal(t, want, ds[0].Reason)
	}

	take(core.NotDenied)
	assert.Equal(t, 1, s.Len(), "an admitted take writes no lockout state")
	take(core.Exhausted)
	assert.Equal(t, 2, s.Len(), "a counted denial writes the lockout key")
	assert.Equal(t, time.Minute, lockTTL(t, s, "rl:{alice}:login:x"), "the counting window")
	take(core.LockedOut)
	assert.Equal(t, 3*time.Hour, lockTTL(t, s, "rl:{alice}:login:x"), "the lockout and its cool-down")

	clock.Advance(3*time.Hour + time.Millisecond)
	ds, err := s.Take(ctx, nil, keys, limits, 0)
	require.NoError(t, err)
	assert.Equal(t, core.NotDenied, ds[0].Reason)
	assert.Equal(t, 1, s.Len(), "the lockout key expired with its cool-down and was dropped when read")
}

// lockTTL returns how long the lockout entry of key has left.
func lockTTL(t *testing.T, s *Store, key string) time.Duration {
	t.Helper()
	sh := &s.shards[s.shardOf(key)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entries[key]
	require.NotNil(t, e, "no entry %q", key)
	require.Equal(t, lockoutEntry, e.alg)
	return micros(e.expireAt - s.clock())
}

// A take of a limit with a lockout, admitted or denied while locked out,
// allocates nothing once its keys exist, as every take of the store.
func TestLockoutTakeDoesNotAllocate(t *testing.T) {
	clock := storetest.NewClock()
	s, err := New(WithClock(clock.Now))
	require.NoError(t, err)
	ctx := context.Background()
	lo := core.Lockout{After: 1, Within: time.Minute, For: time.Hour}
	admitted := []core.Limit{core.PerSecond(1_000_000).WithName("a").WithLockout(lo), core.PerMinute(1_000_000).WithName("b")}
	locked := []core.Limit{core.PerDay(1).WithName("c").WithLockout(lo)}
	ak, lk := []string{"rl:{alice}:a:g", "rl:{alice}:b:g"}, []string{"rl:{bob}:c:g"}
	dst := make([]core.Decision, 0, 2)
	for range 2 {
		_, err = s.Take(ctx, dst[:0], lk, locked, 1) // admitted, then locked out
		require.NoError(t, err)
	}
	for _, tt := range []struct {
		name   string
		keys   []string
		limits []core.Limit
	}{{"admitted", ak, admitted}, {"locked out", lk, locked}} {
		t.Run(tt.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(1000, func() {
				dst, _ = s.Take(ctx, dst[:0], tt.keys, tt.limits, 1)
			})
			assert.Zero(t, allocs)
		})
	}
	assert.Equal(t, core.LockedOut, dst[0].Reason)
}

func TestLockStateCount(t *testing.T) {
	lo := core.Lockout{After: 2, Within: 10 * time.Second, For: time.Second, Multiplier: 3, Max: 5 * time.Second, Cooldown: time.Minute}.Effective()
	const s = int64(time.Second / time.Microsecond)
	st := noLock
	assert.Zero(t, st.count(lo, -100*s), "the first denial, before 2024: a window opens")
	assert.Equal(t, lockState{v: 1, w: -90 * s, u: never, c: never}, st)
	assert.Equal(t, 1*s, st.count(lo, -95*s), "the second: locked out")
	assert.Equal(t, lockState{w: never, n: 1, u: -94 * s, c: -34 * s}, st)
	assert.Equal(t, -34*s-(-95*s), st.ttl(-95*s))
	st.count(lo, -50*s)
	assert.Equal(t, 3*s, st.count(lo, -49*s), "in the cool-down: level 2")
	st.count(lo, 0)
	assert.Equal(t, 5*s, st.count(lo, 0), "level 3: 9s, capped at Max")
	st.count(lo, 200*s)
	assert.Equal(t, 1*s, st.count(lo, 200*s), "after the cool-down: level 1")
}
