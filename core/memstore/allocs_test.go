package memstore

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

func TestTakeOfExistingKeyDoesNotAllocate(t *testing.T) {
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			now := storetest.Start()
			s, err := New(WithClock(func() time.Time {
				now = now.Add(time.Millisecond) // admitted and denied takes alike
				return now
			}))
			require.NoError(t, err)
			ctx := context.Background()
			keys := []string{"rl:{alice}:a:" + alg.Tag(), "rl:{alice}:b:" + alg.Tag()}
			limits := []core.Limit{core.PerSecond(1000).WithAlgorithm(alg).WithName("a"), core.PerMinute(100_000).WithAlgorithm(alg).WithName("b")}
			dst := make([]core.Decision, 0, len(limits))
			for range 3000 { // the sliding log grows to its window
				dst, err = s.Take(ctx, dst[:0], keys, limits, 1)
				require.NoError(t, err)
			}

			allocs := testing.AllocsPerRun(1000, func() {
				dst, _ = s.Take(ctx, dst[:0], keys, limits, 1)
			})

			assert.Zero(t, allocs)
		})
	}
}

// A calendar window computes its window with the time zone rules on every
// take; that allocates nothing either.
func TestCalendarTakeOfExistingKeyDoesNotAllocate(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	now := storetest.Start()
	s, err := New(WithClock(func() time.Time {
		now = now.Add(time.Millisecond)
		return now
	}))
	require.NoError(t, err)
	ctx := context.Background()
	limits := []core.Limit{core.PerCalendarDay(1_000_000, madrid), core.PerCalendarMonth(1_000_000, madrid)}
	keys := []string{"rl:{alice}:a:c", "rl:{alice}:b:c"}
	dst := make([]core.Decision, 0, len(limits))
	for range 10 {
		dst, err = s.Take(ctx, dst[:0], keys, limits, 1)
		require.NoError(t, err)
	}

	allocs := testing.AllocsPerRun(1000, func() {
		dst, _ = s.Take(ctx, dst[:0], keys, limits, 1)
	})

	assert.Zero(t, allocs)
}

// A key whose state expired between two takes (a client far from its
// quota: GCRA state lives only until the quota is full again) keeps its
// entry for the next write: a take of it allocates nothing either, and
// decides as for a new key.
func TestTakeOfExpiredKeyDoesNotAllocate(t *testing.T) {
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			now := storetest.Start()
			s, err := New(WithClock(func() time.Time {
				now = now.Add(2 * time.Minute) // past every TTL of the limits below
				return now
			}))
			require.NoError(t, err)
			ctx := context.Background()
			keys := []string{"rl:{alice}:a:" + alg.Tag(), "rl:{alice}:b:" + alg.Tag()}
			limits := []core.Limit{core.PerSecond(10).WithAlgorithm(alg).WithName("a"), core.PerMinute(100).WithAlgorithm(alg).WithName("b")}
			dst := make([]core.Decision, 0, len(limits))
			dst, err = s.Take(ctx, dst[:0], keys, limits, 1)
			require.NoError(t, err)

			allocs := testing.AllocsPerRun(100, func() {
				dst, _ = s.Take(ctx, dst[:0], keys, limits, 1)
			})

			assert.Zero(t, allocs)
			require.Len(t, dst, 2)
			assert.Equal(t, limits[0].Capacity()-1, dst[0].Remaining, "a fresh quota, charged once")
			assert.Equal(t, limits[1].Capacity()-1, dst[1].Remaining, "a fresh quota, charged once")
			assert.Equal(t, 2, s.Len())
		})
	}
}

// An entry, the memory of every key, stays within 64 bytes (one size
// class, one cache line on amd64): the sliding log's and the concurrency
// limit's state live behind its one ext pointer.
func TestEntryFitsSixtyFourBytes(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(entry{}), uintptr(64))
}
