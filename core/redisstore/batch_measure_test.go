package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkBatchingThroughput measures GCRA takes on the standalone test
// server from 1, 16 and 64 concurrent callers over 10k keys, one take per
// round trip and batched (the default), reporting the takes per round trip
// and the p50 and p99 latency of a take beside ns/op (the wall time per
// take of all callers together). Run the modes side by side, several times
// (the machine is shared):
//
//	go test -run '^$' -bench BatchingThroughput -count 3 ./core/redisstore
func BenchmarkBatchingThroughput(b *testing.B) {
	srv := redistest.Standalone(b)
	limits := []core.Limit{core.PerSecond(1_000_000)} // admits every take: each one writes
	kb := newKeyBuilder(b, srv.Client(b))
	keys := make([][]string, 10_000)
	for i := range keys {
		keys[i] = kb.AppendKeys(nil, "client-"+strconv.Itoa(i), limits)
	}
	modes := []struct {
		name string
		opts []redisstore.Option
	}{{"unbatched", []redisstore.Option{redisstore.WithoutBatching()}}, {"batched", nil}}
	for _, c := range []int{1, 16, 64} {
		for _, mode := range modes {
			b.Run(fmt.Sprintf("c=%d/%s", c, mode.name), func(b *testing.B) {
				opts := srv.Options()
				opts.PoolSize = max(c, 10)
				client := patientClient(opts)
				defer client.Close()
				var counter takeCounter
				client.AddHook(&counter)
				store := mustNew(b, client, mode.opts...)
				b.ResetTimer()
				p50, p99 := hammerN(b, store, keys, limits, c, int64(b.N))
				b.StopTimer()
				b.ReportMetric(float64(counter.takes.Load())/float64(max(counter.roundTrips.Load(), 1)), "takes/roundtrip")
				b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
				b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
			})
		}
	}
}

// hammerN runs n takes from c goroutines and returns the latency quantiles
// of a sample of them.
func hammerN(b *testing.B, store *redisstore.Store, keys [][]string, limits []core.Limit, c int, n int64) (time.Duration, time.Duration) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lat []time.Duration
	for range c {
		wg.Go(func() {
			ctx := context.Background()
			ds := make([]core.Decision, 0, 1)
			var mine []time.Duration
			for i := next.Add(1); i <= n; i = next.Add(1) {
				start := time.Now()
				var err error
				ds, err = store.Take(ctx, ds[:0], keys[i%int64(len(keys))], limits, 1)
				if err != nil {
					b.Error("take: ", err)
					return
				}
				if len(mine) < 20_000 {
					mine = append(mine, time.Since(start))
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	at := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	return at(0.5), at(0.99)
}
