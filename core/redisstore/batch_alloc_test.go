package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// BenchmarkBatchedTake measures the time and allocations of a take,
// unbatched and batched, at 1 and 64 concurrent callers, on the standalone
// server and on the cluster, over 1000 keys. At 1 caller batched takes go
// alone; "pipelined" sends each through a pipeline (of one when alone),
// the batcher's own path. Decisions go to a pooled slice, as a
// [core.Limiter] passes them:
//
//	go test -run '^$' -bench BatchedTake -benchmem ./core/redisstore
func BenchmarkBatchedTake(b *testing.B) {
	limits := []core.Limit{core.PerSecond(1_000_000)}
	modes := []struct {
		name string
		opts []redisstore.Option
	}{
		{"unbatched", []redisstore.Option{redisstore.WithoutBatching()}},
		{"batched", []redisstore.Option{redisstore.WithBatching()}},
		{"pipelined", []redisstore.Option{redisstore.WithBatchingAlone()}},
	}
	backends := []struct {
		name   string
		client func(b *testing.B, poolSize int) redis.UniversalClient
	}{
		{"standalone", func(b *testing.B, poolSize int) redis.UniversalClient {
			opts := redistest.Standalone(b).Options()
			opts.PoolSize = poolSize
			c := patientClient(opts)
			b.Cleanup(func() { _ = c.Close() })
			return c
		}},
		{"cluster", func(b *testing.B, poolSize int) redis.UniversalClient {
			opts := redistest.Cluster(b).Options()
			opts.PoolSize = poolSize
			c := patientClusterClient(opts)
			b.Cleanup(func() { _ = c.Close() })
			return c
		}},
	}
	for _, be := range backends {
		for _, c := range []int{1, 64} {
			for _, m := range modes {
				client := be.client(b, max(c, 10))
				store, kb := newStore(b, client, m.opts...)
				keys := make([][]string, 1000)
				for i := range keys {
					keys[i] = kb.AppendKeys(nil, "client-"+strconv.Itoa(i), limits)
				}
				b.Run(fmt.Sprintf("%s/c=%d/%s", be.name, c, m.name), func(b *testing.B) {
					b.ReportAllocs()
					runConcurrent(b, c, func(ctx context.Context, i int) error {
						return takePooled(ctx, store, keys[i%len(keys)], limits)
					})
				})
			}
		}
	}
}
