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
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// leaseStores are the stores of the Wait-on-a-lease tests, each on the
// fake clock of waitLeaseClock: memstore, and a real Redis told the time
// (redisstore's test clock), so that the leases and the deadlines follow
// the fake sleeps.
var leaseStores = []struct {
	name string
	new  func(t *testing.T, clock *waitClock) core.Store
}{
	{"memstore", func(t *testing.T, clock *waitClock) core.Store {
		s, err := memstore.New(memstore.WithClock(clock.Now))
		require.NoError(t, err)
		return s
	}},
	{"redis", func(t *testing.T, clock *waitClock) core.Store {
		c := redisstore.NewClient(redistest.Standalone(t).Options())
		t.Cleanup(func() { _ = c.Close() })
		s, err := redisstore.New(c, redisstore.WithClock(clock.Now))
		require.NoError(t, err)
		return s
	}},
}

// waitLeaseClock returns a fake clock an hour ahead of the real one: go-redis
// reads a fake deadline as a real one, which must not have passed.
func waitLeaseClock() *waitClock { return &waitClock{t: time.Now().Add(time.Hour)} }

// TestWaitOnALeaseBacksOff: a waiter denied by a Concurrency limit whose
// one place is held sleeps 5 ms, then twice as long each time, up to the
// 1 s estimate (the time until the held lease expires, capped), and is
// admitted soon after the lease comes back; a deadline under the estimate
// is no reason to give up at once. The held lease comes back when the
// fake sleeps have added up to backAfter (0: never).
func TestWaitOnALeaseBacksOff(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		deadline  time.Duration // 0: none
		backAfter time.Duration
		jitter    func(time.Duration) time.Duration // nil: none
		want      []time.Duration
		wantErr   error
	}{
		{name: "back after 50 ms, a 200 ms deadline", deadline: 200 * ms, backAfter: 50 * ms,
			want: []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms}},
		{name: "back after 50 ms, no deadline: not the whole 1 s estimate", backAfter: 50 * ms,
			want: []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms}},
		{name: "back after 3 s: the steps stop growing at the estimate", backAfter: 3 * time.Second,
			want: []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second}},
		{name: "the jitter adds up to half a step", backAfter: 50 * ms, jitter: fullJitter,
			want: []time.Duration{7500 * time.Microsecond, 15 * ms, 30 * ms}},
		{name: "never back, a 300 ms deadline: sleeps up to it, then the deadline's error", deadline: 300 * ms,
			want:    []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 145 * ms},
			wantErr: context.DeadlineExceeded},
	}
	for _, st := range leaseStores {
		for _, tt := range tests {
			t.Run(st.name+"/"+tt.name, func(t *testing.T) {
				clock := waitLeaseClock()
				l, s := newWaitLimiterOn(t, st.new(t, clock), clock,
					core.WithLimits(core.Concurrent(1).WithName("jobs")), core.WithPrefix(redistest.Prefix(t)))
				held, err := l.Allow(context.Background(), "job")
				require.NoError(t, err)
				require.True(t, held.Allowed)
				giveBackAfter(t, l, s, held, tt.backAfter, tt.jitter)
				ctx := context.Background()
				if tt.deadline > 0 {
					ctx = withFakeDeadline(clock, tt.deadline)
				}

				res, err := l.Wait(ctx, "job")

				assert.Equal(t, tt.want, s.sleeps())
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
					assert.NotErrorIs(t, err, core.ErrWaitExceedsDeadline, "the deadline was not too close: no lease came back before it")
					assert.False(t, res.Allowed)
					return
				}
				require.NoError(t, err)
				assert.True(t, res.Allowed)
				require.NoError(t, l.Release(context.Background(), res))
			})
		}
	}
}

// giveBackAfter makes l's waits release held once their fake sleeps add
// up to after (0: never), adding jitter (nil: none).
func giveBackAfter(t *testing.T, l *core.Limiter, s *sleeper, held core.Result, after time.Duration, jitter func(time.Duration) time.Duration) {
	if jitter == nil {
		jitter = noJitter
	}
	var slept time.Duration
	core.SetWaitSeams(l, func(d time.Duration) (<-chan time.Time, func() bool) {
		fire, stop := s.timer(d)
		slept += d
		if after > 0 && slept >= after && held.Lease != nil {
			require.NoError(t, l.Release(context.Background(), held))
			held.Lease = nil
		}
		return fire, stop
	}, jitter)
}

// When a rate limit denies beside the Concurrency limit, its exact
// RetryAfter is the least a sleep can be, and the one deadline that is too
// close.
func TestWaitOnALeaseHonoursTheRateLimitBesideIt(t *testing.T) {
	rate := core.PerSecond(10).WithBurst(1).WithName("rate")
	for _, st := range leaseStores {
		t.Run(st.name, func(t *testing.T) {
			clock := waitLeaseClock()
			l, s := newWaitLimiterOn(t, st.new(t, clock), clock,
				core.WithLimits(rate, core.Concurrent(1).WithName("jobs")), core.WithPrefix(redistest.Prefix(t)))
			held, err := l.Allow(context.Background(), "job")
			require.NoError(t, err)
			require.True(t, held.Allowed)

			res, err := l.Wait(withFakeDeadline(clock, 99*time.Millisecond), "job")
			require.ErrorIs(t, err, core.ErrWaitExceedsDeadline, "the rate limit admits in 100 ms")
			assert.Contains(t, err.Error(), "admission in 100ms")
			assert.Equal(t, "jobs", res.Binding().Limit.Name, "the lease binds: its estimate (1 s) is the longer wait")
			assert.Empty(t, s.sleeps())

			giveBackAfter(t, l, s, held, time.Millisecond, fullJitter)
			res, err = l.Wait(context.Background(), "job")
			require.NoError(t, err)
			assert.True(t, res.Allowed)
			assert.Equal(t, []time.Duration{100 * time.Millisecond}, s.sleeps(),
				"the rate limit's exact wait, not the first 5 ms step, and no jitter on top of it")
			require.NoError(t, l.Release(context.Background(), res))
		})
	}
}

// TestWaitOnALeaseOnRedisInRealTime is the case in real time, on
// a real Redis: 4 waiters on a Concurrent(2) limit, each working 50 ms,
// with 900 ms deadlines (under the 1 s estimate a denial reports). Every
// waiter is admitted, none told its deadline is too close; the limit is
// never exceeded and no lease is left. The last two are admitted about
// 50-100 ms in: the deadline leaves 800 ms for a loaded machine.
func TestWaitOnALeaseOnRedisInRealTime(t *testing.T) {
	c := redisstore.NewClient(redistest.Standalone(t).Options())
	t.Cleanup(func() { _ = c.Close() })
	store, err := redisstore.New(c)
	require.NoError(t, err)
	l, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(2).WithName("jobs")),
		core.WithPrefix(redistest.Prefix(t)), core.WithFailureMode(core.FailClosed), core.WithTimeout(time.Second))
	require.NoError(t, err)

	const waiters = 4
	var inFlight, most atomic.Int64
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
			defer cancel()
			res, err := l.Wait(ctx, "job")
			if !assert.NoError(t, err) {
				return
			}
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(50 * time.Millisecond)
			inFlight.Add(-1)
			assert.NoError(t, l.Release(context.Background(), res))
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, most.Load(), int64(2), "never more than the limit in flight")
	for i := range 2 { // both places are free: no lease left
		res, err := l.Allow(context.Background(), "job")
		require.NoError(t, err)
		assert.True(t, res.Allowed, "place %d", i+1)
	}
}
