package memstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// hammer runs goroutines × takes of keys/limits concurrently and returns
// how many were admitted.
func hammer(t *testing.T, s *Store, goroutines, takes int, keysOf func(g int) []string, limits []core.Limit) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			keys := keysOf(g)
			var dst []core.Decision
			for range takes {
				var err error
				dst, err = s.Take(context.Background(), dst[:0], keys, limits, 1)
				if !assert.NoError(t, err) {
					return
				}
				if allAllowed(dst) {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return admitted.Load()
}

func allAllowed(ds []core.Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}

func TestConcurrentTakesOnOneKeyAdmitExactlyTheCapacity(t *testing.T) {
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s, _ := newTestStore(t) // frozen clock
			limits := []core.Limit{core.PerMinute(100).WithAlgorithm(alg)}
			oneKey := func(int) []string { return []string{"rl:{shared}:m:" + alg.Tag()} }

			assert.Equal(t, int64(100), hammer(t, s, 64, 8, oneKey, limits))
		})
	}
}

// keysInTwoShards returns two keys whose hash tags pick different shards.
func keysInTwoShards(t *testing.T, s *Store) (string, string) {
	t.Helper()
	a := "rl:{a}:x"
	for i := range 1000 {
		b := "rl:{b" + string(rune('0'+i%10)) + string(rune('a'+i/10%26)) + "}:y"
		if s.shardOf(b) != s.shardOf(a) {
			return a, b
		}
	}
	require.FailNow(t, "no two shards found")
	return "", ""
}

func TestTakeAcrossShards(t *testing.T) {
	s, _ := newTestStore(t)
	a, b := keysInTwoShards(t, s)
	l := core.PerMinute(5)
	for range 5 {
		takeOne(t, s, b, l, 1)
	}

	ds, err := s.Take(context.Background(), nil, []string{a, b}, []core.Limit{l, l}, 1)

	require.NoError(t, err)
	assert.True(t, ds[0].Allowed)
	assert.False(t, ds[1].Allowed)
	assert.Equal(t, int64(5), takeOne(t, s, a, l, 0).Remaining, "denied take charged nothing in the other shard")
}

func TestConcurrentTakesAcrossShardsInOppositeOrders(t *testing.T) {
	s, _ := newTestStore(t)
	a, b := keysInTwoShards(t, s)
	limits := []core.Limit{core.PerMinute(100), core.PerMinute(100)}
	crossed := func(g int) []string {
		if g%2 == 0 {
			return []string{a, b}
		}
		return []string{b, a}
	}

	assert.Equal(t, int64(100), hammer(t, s, 64, 8, crossed, limits))
}
