package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// lockedOut is a LockedOut decision: denied, nothing remaining, the
// lockout ending after retry; reset is the later of the limit's own reset
// and retry.
func lockedOut(reset, retry time.Duration) want {
	return want{reason: core.LockedOut, reset: reset, retry: retry}
}

// runLockoutSequences runs each table case of lockouts on a fresh store
// and clock. Unlike [runSequences], it takes each step once and adds no
// peek: a denial counted toward a lockout changes the state, so taking
// it again would count it twice. The tables write their peeks as steps of
// cost 0.
func runLockoutSequences(t *testing.T, newStore NewStore, tests []sequence) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock()
			c := newClient(newStore(t, clock.Now), UniqueKeyBuilder(t), "client", tt.limits)
			for i, st := range tt.steps {
				clock.Set(Start().Add(st.at))
				where := fmt.Sprintf("%s: step %d (at %v, cost %d)", tt.name, i+1, st.at, st.cost)
				checkDecisions(t, where, c.limits, st.want, c.take(t, st.cost))
			}
		})
	}
}

// lockoutTests are takes of limits with a [core.Lockout], worked out from
// its documentation: a denial of the limit itself for want of quota
// (Exhausted) counts, in a window of Within that the first denial opens;
// the After-th locks the client out for For × Multiplier^(level − 1), at
// most Max, and already reports LockedOut; the level goes up when the
// lockout starts before the cool-down (Cooldown after the end of the
// previous one) ends. While locked out, every take (a peek too) is denied
// LockedOut with RetryAfter the time left, Remaining 0 and ResetAfter at
// least that; the other limits report their peek; nothing is charged or
// counted. Neither a peek, nor a cost above the capacity (CostTooHigh), nor
// a denial by another limit of the take counts.
//
// Start is a window boundary of every period here: an offset from Start
// is the time elapsed in the window.
func lockoutTests() []sequence {
	login := core.PerMinute(2).WithAlgorithm(core.FixedWindow).WithName("login")
	hourly := core.Every(hour).WithName("attempts") // GCRA T = B·T = 1h
	burst := core.Limit{Name: "burst", Rate: 10, Period: 10 * sec}
	return []sequence{
		{
			name:   "the After-th denial locks out; a peek or a cost too high does not count",
			limits: []core.Limit{login.WithLockout(core.Lockout{After: 3, Within: 10 * sec, For: 30 * sec})},
			steps: []step{
				take(0, 1, ok(1, minute)),
				take(0, 1, ok(0, minute)),
				take(sec, 1, denied(0, 59*sec, 59*sec)), // 1 of 3, counted until 11s
				take(2*sec, 1, denied(0, 58*sec, 58*sec)),
				take(3*sec, 0, ok(0, 57*sec)),
				take(3*sec, 3, tooHigh(0, 57*sec)),
				// The third: locked out until 34s; the cool-down (For) ends at 64s.
				take(4*sec, 1, lockedOut(56*sec, 30*sec)),
				take(5*sec, 1, lockedOut(55*sec, 29*sec)),
				take(5*sec, 0, lockedOut(55*sec, 29*sec)),
				take(5*sec, 2, lockedOut(55*sec, 29*sec)),
				take(34*sec-us, 1, lockedOut(26*sec+us, us)),
				// Over: the window is still full, and this denial is 1 of 3 again.
				take(34*sec, 1, denied(0, 26*sec, 26*sec)),
				take(35*sec, 0, ok(0, 25*sec)),
				take(minute, 1, ok(1, minute)),
			},
		},
		{
			// The log's one entry, taken at 0, leaves at 60s.
			name: "denials count within Within of the first",
			limits: []core.Limit{
				core.PerMinute(1).WithAlgorithm(core.SlidingLog).WithName("log").
					WithLockout(core.Lockout{After: 3, Within: 10 * sec, For: minute}),
			},
			steps: []step{
				take(0, 1, ok(0, minute)),
				take(sec, 1, denied(0, 59*sec, 59*sec)), // counted until 11s
				take(2*sec, 1, denied(0, 58*sec, 58*sec)),
				take(11*sec, 1, denied(0, 49*sec, 49*sec)), // a new count, until 21s
				take(12*sec, 1, denied(0, 48*sec, 48*sec)),
				take(21*sec-us, 1, lockedOut(minute, minute)),
				take(21*sec, 1, lockedOut(minute-us, minute-us)),
			},
		},
		{
			// Locked out at once (After 1) for 10s × 3^(level − 1), at most 1m.
			name: "each lockout within the cool-down lasts Multiplier times longer, up to Max",
			limits: []core.Limit{
				hourly.WithLockout(core.Lockout{After: 1, Within: minute, For: 10 * sec, Multiplier: 3, Max: minute, Cooldown: 100 * sec}),
			},
			steps: []step{
				take(0, 1, ok(0, hour)),
				take(sec, 1, lockedOut(hour-sec, 10*sec)),         // until 11s, cool-down to 111s
				take(11*sec, 1, lockedOut(hour-11*sec, 30*sec)),   // level 2: until 41s, to 141s
				take(41*sec, 1, lockedOut(hour-41*sec, minute)),   // level 3: 90s, capped
				take(100*sec, 0, lockedOut(hour-100*sec, sec)),    // until 101s
				take(101*sec, 1, lockedOut(hour-101*sec, minute)), // level 4: until 161s
				take(hour, 1, ok(0, hour)),                        // admitted: nothing counted
			},
		},
		{
			// Locked out at once for 10s × 2^(level − 1); the cool-down
			// lasts 20s after each lockout.
			name: "the end of the cool-down brings the level back to 1",
			limits: []core.Limit{
				hourly.WithAlgorithm(core.TokenBucket).
					WithLockout(core.Lockout{After: 1, Within: minute, For: 10 * sec, Multiplier: 2, Cooldown: 20 * sec}),
			},
			steps: []step{
				take(0, 1, ok(0, hour)),
				take(sec, 1, lockedOut(hour-sec, 10*sec)),       // until 11s, cool-down to 31s
				take(11*sec, 1, lockedOut(hour-11*sec, 20*sec)), // level 2: until 31s, to 51s
				take(51*sec, 1, lockedOut(hour-51*sec, 10*sec)), // the cool-down ended: level 1, to 81s
				take(81*sec-us, 1, lockedOut(hour-81*sec+us, 20*sec)),
			},
		},
		{
			name:   "a cost above the capacity never counts; a lockout denies every cost",
			limits: []core.Limit{login.WithLockout(core.Lockout{After: 1, Within: minute, For: 30 * sec})},
			steps: []step{
				take(0, 3, tooHigh(2, 0)),
				take(0, 3, tooHigh(2, 0)),
				take(0, 2, ok(0, minute)),
				take(sec, 3, tooHigh(0, 59*sec)),
				take(sec, 1, lockedOut(59*sec, 30*sec)),
				take(2*sec, 3, lockedOut(58*sec, 29*sec)),
			},
		},
		{
			// GCRA T = 1s, B·T = 10s; the minute window is [0, 60s).
			name: "the lockout limit denies beside another limit, which reports its peek",
			limits: []core.Limit{
				burst,
				login.WithLockout(core.Lockout{After: 2, Within: minute, For: 30 * sec}),
			},
			steps: []step{
				take(0, 2, ok(8, 2*sec), ok(0, minute)),
				take(sec, 1, ok(9, sec), denied(0, 59*sec, 59*sec)),
				take(2*sec, 1, ok(10, 0), lockedOut(58*sec, 30*sec)), // until 32s
				take(3*sec, 1, ok(10, 0), lockedOut(57*sec, 29*sec)),
				take(3*sec, 20, ok(10, 0), lockedOut(57*sec, 29*sec)), // too high for the bucket: locked first
				take(32*sec, 1, ok(10, 0), denied(0, 28*sec, 28*sec)),
				take(minute, 1, ok(9, sec), ok(1, minute)),
			},
		},
		{
			name: "a denial by another limit of the take does not count",
			limits: []core.Limit{
				core.PerMinute(1).WithAlgorithm(core.FixedWindow).WithName("window"),
				burst.WithLockout(core.Lockout{After: 1, Within: minute, For: 30 * sec}),
			},
			steps: []step{
				take(0, 1, ok(0, minute), ok(9, sec)),
				take(sec, 1, denied(0, 59*sec, 59*sec), ok(10, 0)),
				take(2*sec, 1, denied(0, 58*sec, 58*sec), ok(10, 0)),
				take(3*sec, 0, ok(0, 57*sec), ok(10, 0)),
			},
		},
		{
			name: "a lockout of one limit stops the count of another",
			limits: []core.Limit{
				core.PerMinute(1).WithAlgorithm(core.FixedWindow).WithName("window").
					WithLockout(core.Lockout{After: 1, Within: minute, For: 30 * sec}),
				burst.WithLockout(core.Lockout{After: 1, Within: minute, For: 30 * sec}),
			},
			steps: []step{
				take(0, 1, ok(0, minute), ok(9, sec)),
				take(sec, 1, lockedOut(59*sec, 30*sec), ok(10, 0)),
				take(2*sec, 11, lockedOut(58*sec, 29*sec), ok(10, 0)),
				take(31*sec, 0, ok(0, 29*sec), ok(10, 0)),
				take(31*sec, 11, tooHigh(0, 29*sec), tooHigh(10, 0)), // counted by neither
				// The second lockout in a row (the cool-down, For, ends at
				// 61s), of the same length: Multiplier is 1.
				take(32*sec, 1, lockedOut(30*sec, 30*sec), ok(10, 0)),
			},
		},
		{
			// The UTC day is [0, 24h). Cooldown defaults to For: a lockout
			// before 2h+1s is the second in a row, with Multiplier 1.
			name: "a calendar day with a lockout beside a bucket with one",
			limits: []core.Limit{
				burst.WithLockout(core.Lockout{After: 2, Within: minute, For: minute}),
				core.PerCalendarDay(1, time.UTC).WithName("daily").WithLockout(core.Lockout{After: 1, Within: hour, For: hour}),
			},
			steps: []step{
				take(0, 1, ok(9, sec), ok(0, 24*hour)),
				take(sec, 1, ok(10, 0), lockedOut(24*hour-sec, hour)),
				take(2*sec, 1, ok(10, 0), lockedOut(24*hour-2*sec, hour-sec)),
				take(hour+sec, 1, ok(10, 0), lockedOut(23*hour-sec, hour)),
				take(2*hour+sec, 0, ok(10, 0), ok(0, 22*hour-sec)),
			},
		},
	}
}

// testLockoutBesideConcurrency takes a limit with a Lockout beside a
// Concurrency limit with leases: a take admitted holds its lease; a take
// the lockout denies, when it starts and while it lasts, holds none, and
// the Concurrency limit reports its peek. A store that holds no leases
// skips it.
func testLockoutBesideConcurrency(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock.Now)
	ls, ok := leaser(store)
	if !ok {
		t.Skipf("%T does not implement core.Leaser: no Concurrency limits", store)
	}
	limits := []core.Limit{
		core.PerMinute(1).WithName("login").WithLockout(core.Lockout{After: 1, Within: minute, For: minute}),
		core.Concurrent(5),
	}
	keys := UniqueKeyBuilder(t).AppendKeys(nil, "client", limits)
	take := func(lease string) []core.Decision {
		t.Helper()
		ds, err := ls.TakeLease(context.Background(), nil, keys, limits, 1, lease)
		require.NoError(t, err, "TakeLease(%q)", lease)
		require.Len(t, ds, 2)
		return ds
	}
	ds := take("a")
	require.True(t, ds[0].Allowed && ds[1].Allowed, "the first take: %s", decisionsString(ds))
	assert.Equal(t, int64(4), ds[1].Remaining, "lease a held")
	for _, lease := range []string{"b", "c"} { // the denial that locks out, then one while locked out
		ds = take(lease)
		assert.Equal(t, core.LockedOut, ds[0].Reason, "TakeLease(%q)", lease)
		assert.Equal(t, minute, ds[0].RetryAfter, "TakeLease(%q)", lease)
		assert.True(t, ds[1].Allowed, "TakeLease(%q): the Concurrency limit reports its peek", lease)
		assert.Equal(t, int64(4), ds[1].Remaining, "TakeLease(%q): no lease taken", lease)
	}
	require.NoError(t, ls.Release(context.Background(), keys[1], limits[1], "a"))
	ds, err := store.Take(context.Background(), nil, keys, limits, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(5), ds[1].Remaining, "lease a released, and no other held")
}
