package memstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// BenchmarkTakeFixedWindow measures one take of a fixed window key that
// has state, from one goroutine. Compare with BenchmarkTake/one-key/serial.
//
//	go test -run '^$' -bench 'FixedWindow|SlidingWindow' -benchmem -count 5 ./core/memstore
func BenchmarkTakeFixedWindow(b *testing.B) { benchmarkWindow(b, core.FixedWindow) }

// BenchmarkTakeSlidingWindow is [BenchmarkTakeFixedWindow] for the sliding
// window counter.
func BenchmarkTakeSlidingWindow(b *testing.B) { benchmarkWindow(b, core.SlidingWindow) }

func benchmarkWindow(b *testing.B, alg core.Algorithm) {
	s, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	// An hour's window that admits every take.
	limits := []core.Limit{{Rate: 1 << 40, Period: time.Hour, Algorithm: alg}}
	keys := []string{fmt.Sprintf("rl:{client}:w:%c", alg.String()[0])}
	dst := make([]core.Decision, 0, 1)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = s.Take(context.Background(), dst[:0], keys, limits, 1)
	}
}
