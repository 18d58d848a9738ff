package redisstore_test

import (
	"context"
	"fmt"
	"os"
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

// TestBatchingThroughput measures GCRA checks/s on the standalone test
// server at 1, 16 and 64 concurrent callers, unbatched and batched, 2 s
// each, 2 rounds (alternating which mode runs first), over 10k keys. It runs only with
// RATELIMIT_BATCH_MEASURE=1 (it is a measurement, not a check):
//
//	RATELIMIT_BATCH_MEASURE=1 go test -v -run TestBatchingThroughput ./core/redisstore
func TestBatchingThroughput(t *testing.T) {
	if os.Getenv("RATELIMIT_BATCH_MEASURE") == "" {
		t.Skip("a measurement: set RATELIMIT_BATCH_MEASURE=1")
	}
	const (
		each   = 2 * time.Second
		rounds = 2
	)
	srv := redistest.Standalone(t)
	limits := []core.Limit{core.PerSecond(1_000_000)} // admits every take: each one writes
	kb := newKeyBuilder(t, srv.Client(t))
	keys := make([][]string, 10_000)
	for i := range keys {
		keys[i] = kb.AppendKeys(nil, "client-"+strconv.Itoa(i), limits)
	}
	modes := []struct {
		name string
		opts []redisstore.Option
	}{{"unbatched", []redisstore.Option{redisstore.WithoutBatching()}}, {"batched", nil}} // batched: the default
	for round := 1; round <= rounds; round++ {
		for _, c := range []int{1, 16, 64} {
			var rates [2]float64
			for k := range modes {
				m := (k + round) % len(modes) // alternate which mode runs first
				mode := modes[m]
				opts := srv.Options()
				opts.PoolSize = max(c, 10)
				client := patientClient(opts)
				var counter takeCounter
				client.AddHook(&counter)
				store := mustNew(t, client, mode.opts...)
				n, p50, p99 := hammerFor(store, keys, limits, c, each)
				_ = client.Close()
				rates[m] = float64(n) / each.Seconds()
				t.Logf("round %d c=%-2d %-9s %8.0f checks/s  p50 %-8s p99 %-8s %.1f takes/round trip", round, c, mode.name,
					rates[m], p50.Round(time.Microsecond), p99.Round(time.Microsecond),
					float64(counter.takes.Load())/float64(max(counter.roundTrips.Load(), 1)))
			}
			t.Logf("round %d c=%-2d batched/unbatched %.2fx", round, c, rates[1]/rates[0])
		}
	}
}

// hammerFor runs takes from c goroutines for d and returns how many
// succeeded and the latency quantiles of one goroutine's sample.
func hammerFor(store *redisstore.Store, keys [][]string, limits []core.Limit, c int, d time.Duration) (int64, time.Duration, time.Duration) {
	var n atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lat []time.Duration
	stop := time.Now().Add(d)
	for g := range c {
		wg.Go(func() {
			ctx := context.Background()
			ds := make([]core.Decision, 0, 1)
			var mine []time.Duration
			for i := g; time.Now().Before(stop); i += c {
				start := time.Now()
				var err error
				ds, err = store.Take(ctx, ds[:0], keys[i%len(keys)], limits, 1)
				if err != nil {
					panic(fmt.Sprint("take: ", err))
				}
				if len(mine) < 20_000 {
					mine = append(mine, time.Since(start))
				}
				n.Add(1)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	at := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	return n.Load(), at(0.5), at(0.99)
}
