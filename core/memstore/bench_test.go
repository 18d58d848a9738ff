package memstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// BenchmarkTake measures one GCRA take of a key that has state, with the
// default clock: from one goroutine, and from parallel goroutines on one
// key (one contended lock) or on 10,000 keys (spread over the shards).
func BenchmarkTake(b *testing.B) {
	b.Run("one-key/serial", func(b *testing.B) {
		s, keys, limits := benchmarkStore(b, 1)
		dst := make([]core.Decision, 0, 1)
		b.ReportAllocs()
		for b.Loop() {
			dst, _ = s.Take(context.Background(), dst[:0], keys, limits, 1)
		}
	})
	b.Run("one-key/parallel", func(b *testing.B) { benchmarkTakeParallel(b, 1) })
	b.Run("10k-keys/parallel", func(b *testing.B) { benchmarkTakeParallel(b, 10_000) })
}

// BenchmarkTakeCalendar measures one take of a calendar day in Madrid, a
// key with state: the window comes from the zone rules once per window.
// Compare with BenchmarkTake/one-key/serial.
func BenchmarkTakeCalendar(b *testing.B) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	if err != nil {
		b.Fatal(err)
	}
	s, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	limits := []core.Limit{core.PerCalendarDay(1<<40, madrid)}
	keys := []string{"rl:{client}:day:c"}
	dst := make([]core.Decision, 0, 1)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = s.Take(context.Background(), dst[:0], keys, limits, 1)
	}
}

// benchmarkStore returns a store with state for numKeys keys of limits.
// The limit keeps state for seconds, so no key expires during the run.
func benchmarkStore(b *testing.B, numKeys int) (*memstore.Store, []string, []core.Limit) {
	s, err := memstore.New()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	limits := []core.Limit{core.PerHour(1000)}
	keys := make([]string, numKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("rl:{client-%d}:1000-per-1h:g", i)
		if _, err := s.Take(ctx, nil, keys[i:i+1], limits, 1); err != nil {
			b.Fatal(err)
		}
	}
	return s, keys, limits
}

func benchmarkTakeParallel(b *testing.B, numKeys int) {
	s, keys, limits := benchmarkStore(b, numKeys)
	ctx := context.Background()
	var goroutines atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(goroutines.Add(1)) * 7919 // each goroutine starts elsewhere
		dst := make([]core.Decision, 0, 1)
		for pb.Next() {
			k := i % numKeys
			dst, _ = s.Take(ctx, dst[:0], keys[k:k+1], limits, 1)
			i++
		}
	})
}

// BenchmarkTakeLockout measures one take of a GCRA limit with a Lockout,
// a key with state, admitted and locked out. Compare with
// BenchmarkTake/one-key/serial, the same take without a Lockout.
func BenchmarkTakeLockout(b *testing.B) {
	lo := core.Lockout{After: 1, Within: time.Hour, For: time.Hour}
	for _, tt := range []struct {
		name  string
		limit core.Limit
	}{{"admitted", core.PerHour(1 << 40)}, {"locked-out", core.PerHour(1)}} {
		b.Run(tt.name, func(b *testing.B) {
			s, err := memstore.New()
			if err != nil {
				b.Fatal(err)
			}
			limits := []core.Limit{tt.limit.WithLockout(lo)}
			keys := []string{"rl:{client}:login:g"}
			dst := make([]core.Decision, 0, 1)
			for range 2 { // state, and for locked-out the denial that locks out
				dst, _ = s.Take(context.Background(), dst[:0], keys, limits, 1)
			}
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = s.Take(context.Background(), dst[:0], keys, limits, 1)
			}
		})
	}
}
