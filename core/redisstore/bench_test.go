package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkTake measures GCRA takes on the standalone test server at 1, 16
// and 64 concurrent callers, on one hot key and spread over 10k keys, next
// to the ceiling: a raw go-redis EVALSHA of a script that only returns 1.
// Compare each gcra ns/op with the noop-evalsha one of the same c.
//
// floor-time-get-set is a script that does only what any server-clock GCRA
// must (TIME, GET, SET ... PX): the gap between it and gcra is the cost of
// the store's own Lua, the gap between noop and it the cost of Redis.
// gcra-pooled-dst is gcra-10k-keys with the decisions appended to a pooled
// slice, as a [core.Limiter] passes them, so that its allocs/op are the
// store's own. Each reports the client's CPU per op (cpu-ns/op).
//
//	go test -run '^$' -bench . -benchmem -count 3 ./core/redisstore
func BenchmarkTake(b *testing.B) {
	srv := redistest.Standalone(b)
	limits := []core.Limit{core.PerSecond(1_000_000)} // admits every take: each one writes
	kb := newKeyBuilder(b, srv.Client(b))
	keys := make([][]string, 10_000)
	for i := range keys {
		keys[i] = kb.AppendKeys(nil, "client-"+strconv.Itoa(i), limits)
	}
	noop := redis.NewScript("return 1")
	floor := redis.NewScript(floorScript)
	for _, c := range []int{1, 16, 64} {
		opts := srv.Options()
		opts.PoolSize = max(c, 10)
		client := redis.NewClient(opts)
		b.Cleanup(func() { _ = client.Close() })
		store := mustNew(b, client)

		b.Run(fmt.Sprintf("c=%d/noop-evalsha", c), func(b *testing.B) {
			runConcurrent(b, c, func(ctx context.Context, _ int) error {
				return noop.Run(ctx, client, keys[0]).Err()
			})
		})
		b.Run(fmt.Sprintf("c=%d/floor-time-get-set", c), func(b *testing.B) {
			runConcurrent(b, c, func(ctx context.Context, _ int) error {
				return floor.Run(ctx, client, keys[0]).Err()
			})
		})
		b.Run(fmt.Sprintf("c=%d/gcra-hot-key", c), func(b *testing.B) {
			runConcurrent(b, c, func(ctx context.Context, _ int) error {
				_, err := store.Take(ctx, nil, keys[0], limits, 1)
				return err
			})
		})
		b.Run(fmt.Sprintf("c=%d/gcra-10k-keys", c), func(b *testing.B) {
			runConcurrent(b, c, func(ctx context.Context, i int) error {
				_, err := store.Take(ctx, nil, keys[i%len(keys)], limits, 1)
				return err
			})
		})
		b.Run(fmt.Sprintf("c=%d/gcra-pooled-dst", c), func(b *testing.B) {
			runConcurrent(b, c, func(ctx context.Context, i int) error {
				return takePooled(ctx, store, keys[i%len(keys)], limits)
			})
		})
	}
}

// decisions are the slices takePooled appends to.
var decisions = sync.Pool{New: func() any { return new([]core.Decision) }}

// takePooled is store.Take with the decisions appended to a pooled slice,
// as a [core.Limiter] does.
func takePooled(ctx context.Context, store core.Store, keys []string, limits []core.Limit) error {
	dst := decisions.Get().(*[]core.Decision)
	ds, err := store.Take(ctx, (*dst)[:0], keys, limits, 1)
	*dst = ds
	decisions.Put(dst)
	return err
}

// floorScript reads the clock and the key and writes the key, like a GCRA
// take, with no arithmetic.
const floorScript = `
local t = redis.call('TIME')
local now = (tonumber(t[1]) - 1704067200) * 1000000 + tonumber(t[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or now), now)
redis.call('SET', KEYS[1], string.format('%.17g', tat + 1), 'PX', 1000)
return {1, 0, 1, 1, 0}`

// runConcurrent runs op b.N times, spread over c goroutines, and reports
// the CPU this process (the client) spent per op, user and system, as
// cpu-ns/op where it can read it.
func runConcurrent(b *testing.B, c int, op func(ctx context.Context, i int) error) {
	ctx := context.Background()
	if err := op(ctx, 0); err != nil { // loads the script
		b.Fatal(err)
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	start, measured := processCPU()
	for range c {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < b.N; i = int(next.Add(1) - 1) {
				if err := op(ctx, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if end, ok := processCPU(); measured && ok {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}
