package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

// TestConformance runs the store conformance suite on the test server,
// time from the suite's clock (WithClock), rows expiring on it.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) core.Store {
		return newTestStore(t, now)
	})
}

// TestConformanceCalendarSkew runs the calendar tables with the app's
// clock, from which the store computes the boundaries it sends, off the
// clock that decides (the test's stand-in for the database's) by up to 45
// hours: no boundary moves.
func TestConformanceCalendarSkew(t *testing.T) {
	storetest.RunCalendarSkew(t, func(t *testing.T, storeNow, appNow func() time.Time) core.Store {
		return newTestStore(t, storeNow, pgstore.WithAppClock(appNow))
	})
}

// TestConformanceConcurrency runs the suite's concurrency cases with n
// stores on n pools (n app nodes) sharing one database.
func TestConformanceConcurrency(t *testing.T) {
	storetest.RunConcurrency(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
		stores := make([]core.Store, n)
		for i := range stores {
			s, err := pgstore.New(t.Context(), testPool(t, 8), testOpts(pgstore.WithClock(now))...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			stores[i] = s
		}
		return stores
	})
}

// TestConformanceDifferential compares the store with a memory store take
// for take on random limits, costs and instants, clock steps back included
// (storetest.RunDifferential): not one decision may differ.
func TestConformanceDifferential(t *testing.T) {
	memory := func(t *testing.T, now func() time.Time) core.Store {
		s, err := memstore.New(memstore.WithClock(now))
		require.NoError(t, err)
		return s
	}
	storetest.RunDifferential(t, memory, func(t *testing.T, now func() time.Time) core.Store {
		return newTestStore(t, now)
	})
}
