package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// Shorthands for the durations of the tables.
const (
	us     = time.Microsecond
	ms     = time.Millisecond
	sec    = time.Second
	minute = time.Minute
	hour   = time.Hour
)

// A sequence is a table case: takes by one client, in order, against the
// same limits, with the decisions worked out by hand from
// docs/algorithms.md.
type sequence struct {
	name   string
	limits []core.Limit
	steps  []step
	// from is the instant the offsets of the steps count from; the zero
	// value means [Start].
	from time.Time
}

// A step is one Take: at from + at (Start + at by default), of cost,
// expecting want[i] from limits[i]. Steps may go back in time. A step
// with limits takes those, and so does every later step until another
// does: the limits of a policy that changed, whose names (and so keys)
// are the sequence's.
type step struct {
	at     time.Duration
	cost   int64
	want   []want
	limits []core.Limit
}

// want is the expected part of a [core.Decision].
type want struct {
	allowed   bool
	reason    core.Reason
	remaining int64
	reset     time.Duration
	retry     time.Duration
}

// take returns a step; ws holds one expected decision per limit.
func take(at time.Duration, cost int64, ws ...want) step {
	return step{at: at, cost: cost, want: ws}
}

// of returns s taking limits, from s on (see [step]).
func (s step) of(limits ...core.Limit) step {
	s.limits = limits
	return s
}

// ok is an admitting decision.
func ok(remaining int64, reset time.Duration) want {
	return want{allowed: true, reason: core.NotDenied, remaining: remaining, reset: reset}
}

// denied is an Exhausted decision.
func denied(remaining int64, reset, retry time.Duration) want {
	return want{reason: core.Exhausted, remaining: remaining, reset: reset, retry: retry}
}

// tooHigh is a CostTooHigh decision: no wait helps, RetryAfter is 0.
func tooHigh(remaining int64, reset time.Duration) want {
	return want{reason: core.CostTooHigh, remaining: remaining, reset: reset}
}

// peeked is what a peek right after a take that got w must say: the same
// quota, allowed, no wait.
func (w want) peeked() want { return ok(w.remaining, w.reset) }

// A client takes from one store as one identity.
type client struct {
	store  core.Store
	keys   []string
	limits []core.Limit
}

func newClient(store core.Store, kb core.KeyBuilder, id string, limits []core.Limit) client {
	return client{store: store, keys: kb.AppendKeys(nil, id, limits), limits: limits}
}

// take calls Take and fails t on an error or a wrong number of decisions.
func (c client) take(t *testing.T, cost int64) []core.Decision {
	t.Helper()
	ds, err := c.store.Take(context.Background(), nil, c.keys, c.limits, cost)
	require.NoError(t, err, "Take(cost=%d)", cost)
	require.Len(t, ds, len(c.limits), "Take(cost=%d) must return one decision per limit", cost)
	return ds
}

// runSequences runs each table case on a fresh store and clock.
func runSequences(t *testing.T, newStore NewStore, tests []sequence) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock()
			store, kb := newStore(t, clock.Now), UniqueKeyBuilder(t)
			c := newClient(store, kb, "client", tt.limits)
			from := tt.from
			if from.IsZero() {
				from = Start()
			}
			for i, st := range tt.steps {
				clock.Set(from.Add(st.at))
				if st.limits != nil {
					c = newClient(store, kb, "client", st.limits)
				}
				where := fmt.Sprintf("%s: step %d (at %v, cost %d)", tt.name, i+1, st.at, st.cost)
				runStep(t, c, where, st)
			}
		})
	}
}

// runStep takes st and checks the decisions, then checks that a denied
// take changed nothing (the same take again gets the same answer) and
// that a peek at the same instant reports the quota the take reported.
func runStep(t *testing.T, c client, where string, st step) {
	t.Helper()
	require.Len(t, st.want, len(c.limits), "%s: table error: one want per limit", where)
	checkDecisions(t, where, c.limits, st.want, c.take(t, st.cost))
	if !allAllowed(st.want) {
		checkDecisions(t, where+", taken again after the denial", c.limits, st.want, c.take(t, st.cost))
	}
	if st.cost > 0 {
		peeks := make([]want, len(st.want))
		for i, w := range st.want {
			peeks[i] = w.peeked()
		}
		checkDecisions(t, where+", then a peek", c.limits, peeks, c.take(t, 0))
	}
}

func allAllowed(ws []want) bool {
	for _, w := range ws {
		if !w.allowed {
			return false
		}
	}
	return true
}

// checkDecisions asserts every field of every decision, naming the step,
// the limit (algorithm and name) and the field on failure.
func checkDecisions(t *testing.T, where string, limits []core.Limit, ws []want, ds []core.Decision) {
	t.Helper()
	for i, w := range ws {
		d := ds[i]
		l := limits[i]
		at := fmt.Sprintf("%s: limit %d (%s %s)", where, i, l.Algorithm, l.EffectiveName())
		assert.Equal(t, l, d.Limit, "%s: Limit", at)
		assert.Equal(t, w.allowed, d.Allowed, "%s: Allowed", at)
		assert.Equal(t, w.reason, d.Reason, "%s: Reason", at)
		assert.Equal(t, w.remaining, d.Remaining, "%s: Remaining", at)
		assert.Equal(t, w.reset, d.ResetAfter, "%s: ResetAfter", at)
		assert.Equal(t, w.retry, d.RetryAfter, "%s: RetryAfter", at)
	}
}
