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

// us is a number of microseconds as a duration, for the tables.
func us(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

func newTestStore(t *testing.T, opts ...Option) (*Store, *storetest.Clock) {
	t.Helper()
	clock := storetest.NewClock()
	s, err := New(append([]Option{WithClock(clock.Now)}, opts...)...)
	require.NoError(t, err)
	return s, clock
}

// want is the part of a [core.Decision] the tables check.
type want struct {
	allowed   bool
	reason    core.Reason
	remaining int64
	reset     time.Duration
	retry     time.Duration
}

func wantOf(d core.Decision) want {
	return want{d.Allowed, d.Reason, d.Remaining, d.ResetAfter, d.RetryAfter}
}

// allowed and denied build the wants of the tables.
func allowed(remaining int64, reset time.Duration) want {
	return want{allowed: true, remaining: remaining, reset: reset}
}

func denied(remaining int64, reset, retry time.Duration) want {
	return want{reason: core.Exhausted, remaining: remaining, reset: reset, retry: retry}
}

func tooHigh(remaining int64, reset time.Duration) want {
	return want{reason: core.CostTooHigh, remaining: remaining, reset: reset}
}

// A step is one take of a sequence: at storetest.Start()+at, of cost.
type step struct {
	at   time.Duration
	cost int64
	want want
}

// runSteps takes the steps in order on one key of a fresh store.
func runSteps(t *testing.T, l core.Limit, steps []step) {
	t.Helper()
	s, clock := newTestStore(t)
	for i, st := range steps {
		clock.SetOffset(st.at)
		d := takeOne(t, s, "rl:{client}:test", l, st.cost)
		assert.Equal(t, st.want, wantOf(d), "step %d: Take(at=%v, cost=%d)", i, st.at, st.cost)
	}
}

// takeOne takes one limit and returns its decision.
func takeOne(t *testing.T, s *Store, key string, l core.Limit, cost int64) core.Decision {
	t.Helper()
	ds, err := s.Take(context.Background(), nil, []string{key}, []core.Limit{l}, cost)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	return ds[0]
}

// allAlgorithms lists every algorithm, for tests that hold for each.
func allAlgorithms() []core.Algorithm {
	return []core.Algorithm{core.GCRA, core.TokenBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog}
}
