package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ratelimitkit/ratelimit/core"
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
			assert.Equal(t, tt.want, epochMicros(tt.t))
		})
	}
}

func TestClockSteppedBackDoesNotAdmitMore(t *testing.T) {
	for _, alg := range allAlgorithms() {
		t.Run(alg.String(), func(t *testing.T) {
			s, clock := newTestStore(t)
			l := core.PerSecond(3).WithAlgorithm(alg)
			clock.SetOffset(time.Second)
			takeOne(t, s, "k", l, 3)
			atLatest := takeOne(t, s, "k", l, 1)

			clock.SetOffset(500 * time.Millisecond) // back, across a window boundary
			d := takeOne(t, s, "k", l, 1)

			assert.False(t, d.Allowed)
			assert.Equal(t, atLatest, d, "the shard stays at its latest time")
		})
	}
}
