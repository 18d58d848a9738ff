package memstore

import (
	"context"
	"testing"
	"time"

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
