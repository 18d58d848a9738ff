package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// Two limiters (two app nodes, each with its own go-redis client and deny
// cache) hammer one client past its limit at once, 64 goroutines between
// them: exactly After − 1 denials come back Exhausted before the lockout,
// whichever node made them, and every other request is LockedOut. A
// missed After-th denial (two nodes reading the same count) would show as
// more Exhausted; so would a node's deny cache answering a counted denial.
func TestLockoutTwoLimitersCountOneSequence(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			clock := storetest.NewClock()
			lo := core.Lockout{After: 5, Within: time.Hour, For: 10 * time.Minute}
			limit := core.PerHour(20).WithAlgorithm(core.FixedWindow).WithName("login").WithLockout(lo)
			checker, prefix := b.client(t), redistest.Prefix(t)
			t.Cleanup(func() { assertKeysExpire(t, checker, prefix) })
			var limiters []*core.Limiter
			for _, c := range b.clients(t, 2) {
				s := mustNew(t, c, redisstore.WithClock(clock.Now))
				l, err := core.NewLimiter(s, core.WithLimits(limit), core.WithPrefix(prefix),
					core.WithFailureMode(core.FailClosed), core.WithTimeout(lenientTimeout(s)), core.WithoutBreaker())
				require.NoError(t, err)
				limiters = append(limiters, l)
			}
			phases := []struct {
				at                  time.Duration
				admitted, exhausted int
				lockout             time.Duration // the RetryAfter of every LockedOut
			}{
				{0, 20, 4, 10 * time.Minute},
				{10*time.Minute - time.Microsecond, 0, 0, time.Microsecond}, // the deny caches answer
				{10 * time.Minute, 0, 4, 10 * time.Minute},                  // the window is still full
			}
			for i, ph := range phases {
				clock.SetOffset(ph.at)
				got := hammerLimiters(t, limiters, "mallory", 64, 8)
				where := fmt.Sprintf("phase %d at %v", i+1, ph.at)
				assert.Equal(t, ph.admitted, got["admitted"], where)
				assert.Equal(t, ph.exhausted, got["exhausted"], where)
				assert.Equal(t, 64*8-ph.admitted-ph.exhausted, got["locked out "+ph.lockout.String()], where)
			}
		})
	}
}

// lenientTimeout returns a limiter timeout that a loaded machine does not
// reach, or the longest the store accepts (a cluster client's ReadTimeout
// bounds it).
func lenientTimeout(s core.Store) time.Duration {
	d := 5 * time.Second
	if check := core.CapabilitiesOf(s).CheckTimeout; check != nil {
		for d > 100*time.Millisecond && check(d) != nil {
			d /= 2
		}
	}
	return d
}

// hammerLimiters makes goroutines × each requests of identity, spread over
// the limiters, all released at once, and counts their outcomes:
// "admitted", "exhausted", "locked out <RetryAfter>", or the reason.
func hammerLimiters(t *testing.T, limiters []*core.Limiter, identity string, goroutines, each int) map[string]int {
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		l := limiters[g%len(limiters)]
		wg.Go(func() {
			<-start
			for range each {
				res, err := l.Allow(context.Background(), identity)
				outcome := outcomeName(res, err)
				mu.Lock()
				got[outcome]++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return got
}

func outcomeName(res core.Result, err error) string {
	b := res.Binding()
	switch {
	case err != nil:
		return "error: " + err.Error()
	case res.Degraded:
		return "degraded: " + res.Err.Error()
	case res.Allowed:
		return "admitted"
	case b.Reason == core.Exhausted:
		return "exhausted"
	case b.Reason == core.LockedOut:
		return "locked out " + b.RetryAfter.String()
	}
	return b.Reason.String()
}

// The lockout key is written only by a counted denial, as a hash of the
// documented fields (docs/redis-protocol.md, "Lockouts"), and lives no
// longer than its counting window or cool-down (the store's TTLs follow its
// test clock: a PTTL is that much real time, less the milliseconds the test
// took, for which a minute is left).
func TestLockoutKeyLayoutAndTTL(t *testing.T) {
	client := backends[0].client(t)
	clock := storetest.NewClock()
	store, kb := newStore(t, client, redisstore.WithClock(clock.Now))
	ctx := context.Background()
	lo := core.Lockout{After: 2, Within: 2 * time.Hour, For: 3 * time.Hour, Cooldown: 5 * time.Hour}
	limits := []core.Limit{core.PerDay(1).WithName("login").WithLockout(lo)}
	keys := kb.AppendKeys(nil, "mallory", limits)
	lockKey := keylayout.LockoutKey(keys[0])
	take := func(cost int64, want core.Reason) {
		t.Helper()
		ds, err := store.Take(ctx, nil, keys, limits, cost)
		require.NoError(t, err)
		require.Equal(t, want, ds[0].Reason, "cost %d", cost)
	}
	exists := func() int64 {
		n, err := client.Exists(ctx, lockKey).Result()
		require.NoError(t, err)
		return n
	}
	pttl := func() time.Duration {
		ms, err := client.PTTL(ctx, lockKey).Result()
		require.NoError(t, err)
		return ms
	}
	micros := func(d time.Duration) string {
		return strconv.FormatInt(keylayout.EpochMicros(clock.Now().Add(d)), 10)
	}

	take(1, core.NotDenied)
	take(0, core.NotDenied)
	take(2, core.CostTooHigh)
	assert.Zero(t, exists(), "an admitted take, a peek and a cost too high write no lockout key")

	take(1, core.Exhausted)
	assert.Equal(t, map[string]string{"v": "1", "w": micros(2 * time.Hour)}, client.HGetAll(ctx, lockKey).Val())
	assert.LessOrEqual(t, pttl(), 2*time.Hour, "the counting window")
	assert.Greater(t, pttl(), 2*time.Hour-time.Minute)

	clock.Advance(30 * time.Minute)
	take(1, core.LockedOut)
	assert.Equal(t, map[string]string{"n": "1", "u": micros(3 * time.Hour), "c": micros(8 * time.Hour)}, client.HGetAll(ctx, lockKey).Val(),
		"the count starts again: v and w are gone")
	assert.LessOrEqual(t, pttl(), 8*time.Hour, "the lockout and its cool-down")
	assert.Greater(t, pttl(), 8*time.Hour-time.Minute)
}

// A take of one limit with a lockout runs the program "take", which has the
// lockouts; a take of the same limit without one keeps its own program.
func TestLockoutRunsTheJoinedProgram(t *testing.T) {
	store := mustNew(t, backends[0].client(t))
	limit := core.PerSecond(10)
	assert.Equal(t, "take_gcra", redisstore.ProgramOf(store, []core.Limit{limit}))
	assert.Equal(t, "take", redisstore.ProgramOf(store, []core.Limit{limit.WithLockout(core.Lockout{After: 1, Within: time.Second, For: time.Second})}))
}
