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

// A leaseStep is one call of a lease sequence at Start + at: a take of
// cost holding lease (a peek when cost is 0), a release or a renew.
type leaseStep struct {
	at    leaseAt
	op    leaseOp
	lease string
	cost  int64
	want  []want // take: one per limit
	held  bool   // renew: the expected answer
}

type leaseAt = int64 // µs after Start, to keep the tables short

type leaseOp uint8

const (
	opTake leaseOp = iota
	opRelease
	opRenew
)

func acquire(at leaseAt, lease string, cost int64, ws ...want) leaseStep {
	return leaseStep{at: at, op: opTake, lease: lease, cost: cost, want: ws}
}

func peek(at leaseAt, ws ...want) leaseStep { return leaseStep{at: at, op: opTake, want: ws} }

func release(at leaseAt, lease string) leaseStep {
	return leaseStep{at: at, op: opRelease, lease: lease}
}

func renew(at leaseAt, lease string, held bool) leaseStep {
	return leaseStep{at: at, op: opRenew, lease: lease, held: held}
}

// A leaseSequence is a table case of one client's calls on limits that
// include a Concurrency limit.
type leaseSequence struct {
	name   string
	limits []core.Limit
	steps  []leaseStep
}

// Offsets of the lease tables, in µs.
const (
	usOf  = leaseAt(1)
	msOf  = 1000 * usOf
	secOf = 1000 * msOf
)

// leaseTests are the Concurrency tables: a lease is live while now <
// its expiry (taken or renewed at + Period); Remaining is Rate − live
// leases; ResetAfter the time until the newest lease expires (after the
// take: at least the TTL); RetryAfter of a denial the time until the
// oldest lease expires, at most 1 s ([core.ConcurrencyRetryAfter]).
func leaseTests() []leaseSequence {
	two := core.Concurrent(2).WithLeaseTTL(10 * sec)
	one := core.Concurrent(1).WithLeaseTTL(10 * sec)
	return []leaseSequence{
		{
			name:   "acquire up to N, N+1 denied, release, release twice",
			limits: []core.Limit{two},
			steps: []leaseStep{
				peek(0, ok(2, 0)),
				acquire(0, "a", 1, ok(1, 10*sec)),
				// a expires at 10s; the newest lease after b at 11s.
				acquire(1*secOf, "b", 1, ok(0, 10*sec)),
				// Full: the oldest lease (a) expires in 8s, capped at 1s.
				acquire(2*secOf, "c", 1, denied(0, 9*sec, sec)),
				release(2*secOf, "a"),
				peek(2*secOf, ok(1, 9*sec)),
				release(2*secOf, "a"),
				peek(2*secOf, ok(1, 9*sec)),
				release(2*secOf, "never-taken"),
				peek(2*secOf, ok(1, 9*sec)),
				acquire(2*secOf, "c", 1, ok(0, 10*sec)),
				release(3*secOf, "b"),
				release(3*secOf, "c"),
				peek(3*secOf, ok(2, 0)),
			},
		},
		{
			name:   "an abandoned lease expires after its TTL",
			limits: []core.Limit{one},
			steps: []leaseStep{
				acquire(0, "a", 1, ok(0, 10*sec)),
				acquire(9500*msOf, "b", 1, denied(0, 500*ms, 500*ms)),
				acquire(10*secOf-1, "b", 1, denied(0, us, us)),
				// a expires at exactly 10s.
				acquire(10*secOf, "b", 1, ok(0, 10*sec)),
				release(10*secOf, "a"), // expired: nothing to do
				peek(10*secOf, ok(0, 10*sec)),
				release(10*secOf, "b"),
				peek(10*secOf, ok(1, 0)),
			},
		},
		{
			// A take sent before its caller gave up may run after the
			// release that undoes it (a pipeline, a stalled server,
			// another connection): the release leaves a tombstone for the
			// TTL, and the take holds nothing. Its reply, which nobody
			// reads, is an admission.
			name:   "a release that ran before its take: the take holds nothing",
			limits: []core.Limit{two},
			steps: []leaseStep{
				release(0, "a"),
				peek(0, ok(2, 0)), // a tombstone is no lease
				acquire(1*secOf, "a", 1, ok(1, 10*sec)),
				peek(1*secOf, ok(2, 0)),
				acquire(1*secOf, "b", 1, ok(1, 10*sec)),
				acquire(1*secOf, "c", 1, ok(0, 10*sec)),
				acquire(1*secOf, "d", 1, denied(0, 10*sec, sec)),
				// A tombstone lives the TTL: a take after it holds.
				release(2*secOf, "e"),
				release(2*secOf, "b"),
				release(2*secOf, "c"),
				acquire(12*secOf, "e", 1, ok(1, 10*sec)),
				peek(12*secOf, ok(1, 10*sec)),
			},
		},
		{
			name:   "renew pushes the expiry; an expired lease is not renewed",
			limits: []core.Limit{one},
			steps: []leaseStep{
				acquire(0, "a", 1, ok(0, 10*sec)),
				renew(8*secOf, "a", true), // now expires at 18s
				acquire(15*secOf, "b", 1, denied(0, 3*sec, sec)),
				acquire(17500*msOf, "b", 1, denied(0, 500*ms, 500*ms)),
				renew(18*secOf, "a", false),
				renew(18*secOf, "never-taken", false),
				acquire(18*secOf, "b", 1, ok(0, 10*sec)),
				renew(18*secOf, "a", false),
				peek(18*secOf, ok(0, 10*sec)),
			},
		},
		{
			name:   "any cost takes one lease",
			limits: []core.Limit{two},
			steps: []leaseStep{
				acquire(0, "a", 5, ok(1, 10*sec)),
				acquire(0, "b", 1000, ok(0, 10*sec)),
				acquire(0, "c", 1, denied(0, 10*sec, sec)),
			},
		},
		{
			// The window [0, 60s) holds 2.
			name:   "with a rate limit, all or nothing both ways",
			limits: []core.Limit{core.PerMinute(2).WithAlgorithm(core.FixedWindow), one},
			steps: []leaseStep{
				acquire(0, "a", 1, ok(1, minute), ok(0, 10*sec)),
				// Only the concurrency limit denies: no quota is taken.
				acquire(1*secOf, "b", 1, ok(1, 59*sec), denied(0, 9*sec, sec)),
				peek(1*secOf, ok(1, 59*sec), ok(0, 9*sec)),
				release(1*secOf, "a"),
				acquire(1*secOf, "c", 1, ok(0, 59*sec), ok(0, 10*sec)),
				release(1*secOf, "c"),
				// Only the rate limit denies: no lease is taken.
				acquire(2*secOf, "d", 1, denied(0, 58*sec, 58*sec), ok(1, 0)),
				peek(2*secOf, ok(0, 58*sec), ok(1, 0)),
				// Both deny.
				acquire(3*secOf, "e", 1, denied(0, 57*sec, 57*sec), ok(1, 0)),
				acquire(60*secOf, "e", 1, ok(1, minute), ok(0, 10*sec)),
				acquire(60*secOf, "f", 1, ok(1, minute), denied(0, 10*sec, sec)),
			},
		},
		{
			// Start is a Wednesday, midnight UTC: the day ends in 24h, the
			// ISO week on Monday, in 5 days. On Redis the call carries
			// the boundaries of both calendar windows and then the lease
			// id, its last argument.
			name: "with calendar windows, all or nothing both ways",
			limits: []core.Limit{core.PerCalendarDay(2, time.UTC), core.PerCalendarWeek(3, time.UTC),
				one},
			steps: []leaseStep{
				acquire(0, "a", 1, ok(1, 24*hour), ok(2, 5*24*hour), ok(0, 10*sec)),
				// Only the concurrency limit denies: no quota is taken.
				acquire(1*secOf, "b", 1, ok(1, 24*hour-sec), ok(2, 5*24*hour-sec), denied(0, 9*sec, sec)),
				release(1*secOf, "a"),
				acquire(1*secOf, "c", 1, ok(0, 24*hour-sec), ok(1, 5*24*hour-sec), ok(0, 10*sec)),
				release(1*secOf, "c"),
				// Only the day denies: no lease is taken, the week keeps 1.
				acquire(2*secOf, "d", 1, denied(0, 24*hour-2*sec, 24*hour-2*sec), ok(1, 5*24*hour-2*sec), ok(1, 0)),
				peek(2*secOf, ok(0, 24*hour-2*sec), ok(1, 5*24*hour-2*sec), ok(1, 0)),
				// The next day: the day's quota is back, the week's is not.
				acquire(24*3600*secOf, "e", 1, ok(1, 24*hour), ok(0, 4*24*hour), ok(0, 10*sec)),
			},
		},
	}
}

// leaser returns s as a [core.Leaser] when it holds leases: its
// [core.Capabilities] state Leases and it has the methods, as
// [core.NewLimiter] requires.
func leaser(s core.Store) (core.Leaser, bool) {
	ls, ok := s.(core.Leaser)
	return ls, ok && core.CapabilitiesOf(s).Leases
}

// runLeaseSequences runs the lease tables, and checks that Take refuses a
// Concurrency limit with a cost above zero (it would hold a lease no one
// can release).
func runLeaseSequences(t *testing.T, newStore NewStore) {
	clock := NewClock()
	probe := newStore(t, clock.Now)
	leaser, ok := leaser(probe)
	if !ok {
		t.Skipf("%T does not implement core.Leaser: no Concurrency limits", probe)
	}
	t.Run("Take refuses a Concurrency limit with cost > 0", func(t *testing.T) {
		limits := []core.Limit{core.Concurrent(1)}
		keys := UniqueKeyBuilder(t).AppendKeys(nil, "client", limits)
		_, err := leaser.Take(context.Background(), nil, keys, limits, 1)
		assert.Error(t, err)
		_, err = leaser.TakeLease(context.Background(), nil, keys, limits, 1, "")
		assert.Error(t, err, "TakeLease with an empty lease id")
		ds, err := leaser.Take(context.Background(), nil, keys, limits, 0)
		require.NoError(t, err, "a peek needs no lease")
		assert.Equal(t, int64(1), ds[0].Remaining)
	})
	for _, tt := range leaseTests() {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock()
			store := newStore(t, clock.Now).(core.Leaser)
			keys := UniqueKeyBuilder(t).AppendKeys(nil, "client", tt.limits)
			for i, st := range tt.steps {
				clock.Set(Start().Add(micros(st.at)))
				where := fmt.Sprintf("%s: step %d (at %v)", tt.name, i+1, micros(st.at))
				runLeaseStep(t, store, keys, tt.limits, where, st)
			}
		})
	}
}

func runLeaseStep(t *testing.T, store core.Leaser, keys []string, limits []core.Limit, where string, st leaseStep) {
	t.Helper()
	ctx := context.Background()
	leased := leasedKey(keys, limits)
	switch st.op {
	case opRelease:
		require.NoError(t, store.Release(ctx, keys[leased], limits[leased], st.lease), "%s: Release(%q)", where, st.lease)
	case opRenew:
		held, err := store.Renew(ctx, keys[leased], limits[leased], st.lease)
		require.NoError(t, err, "%s: Renew(%q)", where, st.lease)
		assert.Equal(t, st.held, held, "%s: Renew(%q) held", where, st.lease)
	default:
		require.Len(t, st.want, len(limits), "%s: table error: one want per limit", where)
		var ds []core.Decision
		var err error
		if st.cost == 0 {
			ds, err = store.Take(ctx, nil, keys, limits, 0)
		} else {
			ds, err = store.TakeLease(ctx, nil, keys, limits, st.cost, st.lease)
		}
		require.NoError(t, err, "%s: take(lease %q, cost %d)", where, st.lease, st.cost)
		require.Len(t, ds, len(limits))
		checkDecisions(t, fmt.Sprintf("%s, lease %q cost %d", where, st.lease, st.cost), limits, st.want, ds)
		d := ds[leased]
		assert.Equal(t, limits[leased].Rate-st.want[leased].remaining, d.InFlight(), "%s: InFlight", where)
	}
}

// leasedKey returns the index of the Concurrency limit among limits.
func leasedKey(keys []string, limits []core.Limit) int {
	for i, l := range limits {
		if l.Algorithm == core.Concurrency {
			return i
		}
	}
	panic("storetest: table error: no Concurrency limit among " + fmt.Sprint(keys))
}

// micros converts µs to a [time.Duration].
func micros(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
