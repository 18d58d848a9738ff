package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkTakeLockout measures what a [core.Lockout] costs a take, next
// to the same takes without one, on a dedicated server with one caller,
// with the server's own time per script call (server-µs/call, INFO
// commandstats):
//
//	go test -run '^$' -bench TakeLockout -count 5 ./core/redisstore
//
// The cases:
//   - gcra, gcra+fixed-window: limits without a lockout (the one-limit
//     program take_gcra, and the joined program "take"), which lockouts
//     must not slow down;
//   - gcra-lockout, gcra+fixed-window-lockout: the same admitted takes of
//     limits with a lockout, which read the lockout key first;
//   - lockout-counted: a take denied and counted (the lockout key read and
//     written), never reaching After;
//   - lockout-locked: a take of a client locked out (the lockout key read,
//     then a peek).
func BenchmarkTakeLockout(b *testing.B) {
	client := redistest.Dedicated(b).Client(b)
	kb := newKeyBuilder(b, client)
	store := mustNew(b, client)
	lo := core.Lockout{After: 10, Within: time.Minute, For: time.Hour}
	rate := core.PerSecond(1_000_000).WithName("rate")
	window := core.PerMinute(10_000_000).WithAlgorithm(core.FixedWindow).WithName("window")
	hourly := core.PerHour(1).WithName("hourly")
	cases := []struct {
		name   string
		limits []core.Limit
		before int // takes of each client before the timed ones
	}{
		{"gcra", []core.Limit{rate}, 0},
		{"gcra+fixed-window", []core.Limit{rate, window}, 0},
		{"gcra-lockout", []core.Limit{rate.WithLockout(lo)}, 0},
		{"gcra+fixed-window-lockout", []core.Limit{rate.WithLockout(lo), window}, 0},
		{"lockout-counted", []core.Limit{hourly.WithLockout(core.Lockout{After: 1 << 40, Within: time.Hour, For: time.Hour})}, 1},
		{"lockout-locked", []core.Limit{hourly.WithLockout(core.Lockout{After: 1, Within: time.Hour, For: time.Hour})}, 2},
	}
	for _, tt := range cases {
		b.Run(tt.name, func(b *testing.B) {
			keys := make([][]string, 1000)
			for i := range keys {
				keys[i] = kb.AppendKeys(nil, tt.name+"-"+strconv.Itoa(i), tt.limits)
				for range tt.before {
					if _, err := store.Take(context.Background(), nil, keys[i], tt.limits, 1); err != nil {
						b.Fatal(err)
					}
				}
			}
			serverTime(b, client, func() {
				runConcurrent(b, 1, func(ctx context.Context, i int) error {
					_, err := store.Take(ctx, nil, keys[i%len(keys)], tt.limits, 1)
					return err
				})
			})
		})
	}
}
