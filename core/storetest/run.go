package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// NewStore returns a fresh store whose clock is now (the test controls it,
// usually with a [Clock]). Stores it returns may share state, such as one
// Redis server for the whole test binary: the suite gives every subtest
// keys of its own ([UniqueKeyBuilder]).
type NewStore func(t *testing.T, now func() time.Time) core.Store

// Run checks that the stores newStore returns implement [core.Store] as
// docs/algorithms.md specifies, reporting each failure with the case, the
// step, the limit and the field. See the package documentation for what
// it covers.
func Run(t *testing.T, newStore NewStore) {
	t.Run("GCRA", func(t *testing.T) { runSequences(t, newStore, bucketTests(core.GCRA)) })
	t.Run("TokenBucket", func(t *testing.T) { runSequences(t, newStore, bucketTests(core.TokenBucket)) })
	t.Run("FixedWindow", func(t *testing.T) { runSequences(t, newStore, fixedWindowTests()) })
	t.Run("SlidingWindow", func(t *testing.T) { runSequences(t, newStore, slidingWindowTests()) })
	t.Run("FixedWindow period change", func(t *testing.T) { runSequences(t, newStore, fixedWindowPeriodTests()) })
	t.Run("SlidingWindow period change", func(t *testing.T) { runSequences(t, newStore, slidingWindowPeriodTests()) })
	t.Run("MultiLimit period change", func(t *testing.T) { runSequences(t, newStore, windowsPeriodTests()) })
	t.Run("SlidingLog", func(t *testing.T) { runSequences(t, newStore, slidingLogTests()) })
	t.Run("CalendarWindow", func(t *testing.T) { runSequences(t, newStore, calendarTests(t)) })
	t.Run("MultiLimit", func(t *testing.T) { runSequences(t, newStore, multiLimitTests()) })
	t.Run("Concurrency", func(t *testing.T) { runLeaseSequences(t, newStore) })
	t.Run("Lockout", func(t *testing.T) {
		skipWithoutLockouts(t, newStore(t, NewClock().Now))
		runLockoutSequences(t, newStore, lockoutTests())
	})
	t.Run("Lockout beside a Concurrency limit", func(t *testing.T) {
		skipWithoutLockouts(t, newStore(t, NewClock().Now))
		testLockoutBesideConcurrency(t, newStore)
	})
	t.Run("GCRA matches TokenBucket on random takes", func(t *testing.T) { testEquivalence(t, newStore) })
	t.Run("clock going backwards admits no more", func(t *testing.T) { testClockBackwards(t, newStore) })
	t.Run("clock going backwards: the key's own time", func(t *testing.T) { runSequences(t, newStore, clockBackTests()) })
	t.Run("clock before 2024", func(t *testing.T) { runSequences(t, newStore, beforeEpochTests()) })
	t.Run("hostile identities are independent clients", func(t *testing.T) { testIdentities(t, newStore) })
	t.Run("Take appends to dst", func(t *testing.T) { testAppends(t, newStore) })
	t.Run("Controls", func(t *testing.T) { runControlCases(t, newStore) })
}

// skipWithoutLockouts skips, saying so, the cases of lockouts over a store
// that does not count them ([core.Capabilities].Lockouts): a limiter
// refuses a limit with a Lockout over it.
func skipWithoutLockouts(t *testing.T, s core.Store) {
	t.Helper()
	if !core.CapabilitiesOf(s).Lockouts {
		t.Skipf("%T does not count lockouts (its Capabilities do not state Lockouts): lockout cases skipped", s)
	}
}

// testAppends checks that Take appends its decisions after what dst
// already holds.
func testAppends(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock.Now)
	limits := []core.Limit{core.PerMinute(5), core.PerHour(7).WithAlgorithm(core.SlidingLog)}
	keys := UniqueKeyBuilder(t).AppendKeys(nil, "client", limits)
	sentinel := core.Decision{Remaining: -42}
	dst := make([]core.Decision, 1, 8)
	dst[0] = sentinel

	ds, err := store.Take(context.Background(), dst, keys, limits, 1)
	require.NoError(t, err)
	require.Len(t, ds, 3, "Take must append one decision per limit to dst")
	assert.Equal(t, sentinel, ds[0], "Take must keep what dst held")
	assert.Equal(t, int64(4), ds[1].Remaining, "decision for limits[0] must come first")
	assert.Equal(t, int64(6), ds[2].Remaining, "decision for limits[1] must come second")
}
