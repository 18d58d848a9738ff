package memstore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

func newConformanceStore(t *testing.T, now func() time.Time) core.Store {
	s, err := memstore.New(memstore.WithClock(now))
	require.NoError(t, err)
	return s
}

// TestConformance runs the shared store suite (docs/algorithms.md) against
// the memory store.
func TestConformance(t *testing.T) {
	storetest.Run(t, newConformanceStore)
}

// TestConformanceCalendarSkew runs the calendar tables with an app clock
// that differs from the store's: the memory store reads one clock, so the
// app clock is not even consulted.
func TestConformanceCalendarSkew(t *testing.T) {
	storetest.RunCalendarSkew(t, func(t *testing.T, storeNow, _ func() time.Time) core.Store {
		return newConformanceStore(t, storeNow)
	})
}

// TestConformanceConcurrency runs the suite's concurrent takes; the
// clients of one memory store share it, as the processes of one app would
// share a Redis.
func TestConformanceConcurrency(t *testing.T) {
	storetest.RunConcurrency(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
		return slices.Repeat([]core.Store{newConformanceStore(t, now)}, n)
	})
}

// TestConformanceDifferential runs the suite's random takes on two memory
// stores: core/redisstore compares itself with a memory store this way,
// and here the suite's checks of each decision (no negative or overlong
// wait, no Remaining beyond the capacity) hold the memory store alone.
func TestConformanceDifferential(t *testing.T) {
	storetest.RunDifferential(t, newConformanceStore, newConformanceStore)
}
