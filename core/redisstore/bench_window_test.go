package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkTakeFixedWindow measures one-limit takes of a fixed window on
// the standalone test server, at 1 and 16 concurrent callers over 10k keys
// with state: the one-limit program's path, whose Redis calls (HMGET, then
// HSET of the count) a change of the stored state must not add to.
//
//	go test -run '^$' -bench 'FixedWindow|SlidingWindow' -benchmem -count 5 ./core/redisstore
func BenchmarkTakeFixedWindow(b *testing.B) { benchmarkWindow(b, core.FixedWindow) }

// BenchmarkTakeSlidingWindow is [BenchmarkTakeFixedWindow] for the sliding
// window counter.
func BenchmarkTakeSlidingWindow(b *testing.B) { benchmarkWindow(b, core.SlidingWindow) }

func benchmarkWindow(b *testing.B, alg core.Algorithm) {
	srv := redistest.Standalone(b)
	// An hour's window that admits every take: each one writes its count.
	limits := []core.Limit{{Rate: 1 << 40, Period: time.Hour, Algorithm: alg}}
	kb := newKeyBuilder(b, srv.Client(b))
	keys := make([][]string, 10_000)
	for i := range keys {
		keys[i] = kb.AppendKeys(nil, "client-"+strconv.Itoa(i), limits)
	}
	for _, c := range []int{1, 16} {
		opts := srv.Options()
		opts.PoolSize = max(c, 10)
		client := redis.NewClient(opts)
		b.Cleanup(func() { _ = client.Close() })
		store := mustNew(b, client)
		for _, k := range keys { // every key has state, as a returning client's
			if _, err := store.Take(context.Background(), nil, k, limits, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("c=%d/10k-keys", c), func(b *testing.B) {
			runConcurrent(b, c, func(ctx context.Context, i int) error {
				_, err := store.Take(ctx, nil, keys[i%len(keys)], limits, 1)
				return err
			})
		})
	}
}
