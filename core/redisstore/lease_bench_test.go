package redisstore_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkLease measures a request under a concurrency limit, the take
// of its lease and its release, beside a take of two rate limits (one
// call, no release), on the standalone test server, with the server's
// own time (INFO commandstats: the µs of every EVALSHA) per request as
// server-µs/op, and per script call as server-µs/call:
//
//	go test -run '^$' -bench Lease -benchtime 1s -count 3 ./core/redisstore
func BenchmarkLease(b *testing.B) {
	srv := redistest.Standalone(b)
	rate := core.PerSecond(1_000_000)
	window := core.PerMinute(100_000_000).WithAlgorithm(core.FixedWindow)
	conc := core.Concurrent(10_000)
	kb := newKeyBuilder(b, srv.Client(b))
	for _, c := range []int{1, 16} {
		opts := srv.Options()
		opts.PoolSize = max(c, 10)
		client := redis.NewClient(opts)
		b.Cleanup(func() { _ = client.Close() })
		store := mustNew(b, client)
		keysOf := func(limits []core.Limit) [][]string {
			keys := make([][]string, 1000)
			for i := range keys {
				keys[i] = kb.AppendKeys(nil, "client-"+strconv.Itoa(i), limits)
			}
			return keys
		}
		twoRates := []core.Limit{rate, window}
		rateConc := []core.Limit{rate, conc}
		rk, ck := keysOf(twoRates), keysOf(rateConc)
		b.Run(fmt.Sprintf("c=%d/two-rate-limits-take", c), func(b *testing.B) {
			serverTime(b, client, func() {
				runConcurrent(b, c, func(ctx context.Context, i int) error {
					_, err := store.Take(ctx, nil, rk[i%len(rk)], twoRates, 1)
					return err
				})
			})
		})
		b.Run(fmt.Sprintf("c=%d/rate-and-concurrency-take-release", c), func(b *testing.B) {
			serverTime(b, client, func() {
				runConcurrent(b, c, func(ctx context.Context, i int) error {
					keys := ck[i%len(ck)]
					lease := fmt.Sprintf("%032x", i)
					if _, err := store.TakeLease(ctx, nil, keys, rateConc, 1, lease); err != nil {
						return err
					}
					return store.Release(ctx, keys[1], rateConc[1], lease)
				})
			})
		})
	}
}

var evalshaStats = regexp.MustCompile(`cmdstat_evalsha:calls=(\d+),usec=(\d+)`)

// serverTime runs run and reports the server's µs of EVALSHA meanwhile,
// per op (b.N; the warm-up op of runConcurrent is in the sum too) and per
// call.
func serverTime(b *testing.B, client *redis.Client, run func()) {
	ctx := context.Background()
	if err := client.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	run()
	b.StopTimer()
	info, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	if m := evalshaStats.FindStringSubmatch(info); m != nil {
		calls, _ := strconv.ParseFloat(m[1], 64)
		usec, _ := strconv.ParseFloat(m[2], 64)
		b.ReportMetric(usec/calls, "server-µs/call")
		b.ReportMetric(usec/float64(b.N), "server-µs/op")
	}
}
