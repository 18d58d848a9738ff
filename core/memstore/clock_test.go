package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

func TestEpochMicros(t *testing.T) {
	tests := []struct {
		name string
		t    time.Time
		want int64
	}{
		{"the epoch", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{"one second and a bit later", time.Date(2024, 1, 1, 0, 0, 1, 2999, time.UTC), 1_000_002},
		{"another zone, same instant", time.Date(2024, 1, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600)), 0},
		{"before the epoch rounds down", time.Date(2023, 12, 31, 23, 59, 59, 999_999_500, time.UTC), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, keylayout.EpochMicros(tt.t))
		})
	}
}

// A reading behind a key's state is taken as the key's own time, and the
// waits are measured from the reading: the same decision as at the latest
// time, with ResetAfter and RetryAfter longer by the lag.
func TestClockSteppedBackDoesNotAdmitMore(t *testing.T) {
	const lag = 500 * time.Millisecond
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s, clock := newTestStore(t)
			l := core.PerSecond(3).WithAlgorithm(alg)
			clock.SetOffset(time.Second)
			takeOne(t, s, "k", l, 3)
			atLatest := takeOne(t, s, "k", l, 1)

			clock.SetOffset(time.Second - lag) // back, across a window boundary
			d := takeOne(t, s, "k", l, 1)

			want := atLatest
			want.ResetAfter += lag
			want.RetryAfter += lag
			assert.False(t, d.Allowed)
			assert.Equal(t, want, d)
		})
	}
}

// A clock before the stores' epoch (a host that boots at 1970 before NTP
// sets its clock) runs like any other: the quota refills as it advances.
func TestClockBefore2024Runs(t *testing.T) {
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			clock := storetest.NewClock()
			clock.Set(time.Unix(0, 0))
			s, err := New(WithClock(clock.Now))
			require.NoError(t, err)
			l := core.PerSecond(2).WithAlgorithm(alg)
			takeOne(t, s, "k", l, 2)
			require.False(t, takeOne(t, s, "k", l, 1).Allowed, "exhausted")

			clock.Advance(2 * time.Second) // two periods: full again for every algorithm
			d := takeOne(t, s, "k", l, 2)

			assert.True(t, d.Allowed, "the whole quota is back")
			assert.Equal(t, int64(0), d.Remaining)
		})
	}
}
