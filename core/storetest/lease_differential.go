package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// The size of the lease part of [RunDifferential].
const (
	leaseDiffCases = 150
	leaseDiffSteps = 32
)

// leaseTTLs are the lease TTLs the random cases draw from: the bounds of
// validation, a few ms (expiry within a few steps), and common values.
var leaseTTLs = []time.Duration{ms, 3 * ms, 250 * ms, sec, 10 * sec, 30 * sec, 24 * hour}

// runLeaseDifferential sends the same random acquires, peeks, releases and
// renewals, at the same instants, to both stores, which must be
// [core.Leaser]s, and requires identical answers: a Concurrency limit of 1
// to 4 in flight and a random TTL, alone or beside a random rate limit;
// leases released once, twice or never (left to expire), renewed live or
// expired, ids never taken or released before their take (a tombstone); the clock moving by 0, 1µs, fractions and
// multiples of the TTL, to the last RetryAfter, and back.
func runLeaseDifferential(t *testing.T, reference, newStore NewStore, rnd *rand.Rand) {
	clock := NewClock()
	_, refOK := leaser(reference(t, clock.Now))
	_, subOK := leaser(newStore(t, clock.Now))
	if !refOK || !subOK {
		t.Skip("both stores must implement core.Leaser to compare Concurrency limits")
	}
	for i := range leaseDiffCases {
		if !runLeaseCase(t, reference, newStore, rnd) {
			t.Errorf("lease case %d of %d failed", i+1, leaseDiffCases)
			return
		}
	}
}

// leaseOps are the operations of a lease case, by weight.
var leaseOps = []string{"acquire", "acquire", "acquire", "acquire", "peek", "release", "release", "renew", "renew"}

func runLeaseCase(t *testing.T, reference, newStore NewStore, rnd *rand.Rand) bool {
	conc := core.Concurrent(1 + rnd.Int64N(4)).WithLeaseTTL(leaseTTLs[rnd.IntN(len(leaseTTLs))])
	limits := []core.Limit{conc}
	if rnd.IntN(2) == 0 {
		rate := core.Limit{Rate: 1 + rnd.Int64N(6), Period: []time.Duration{sec, 10 * sec, minute}[rnd.IntN(3)],
			Algorithm: core.Algorithm(rnd.IntN(int(core.SlidingLog) + 1)), Name: "rate"}
		limits = append([]core.Limit{rate}, limits...)
	}
	start := time.Date(2020+rnd.IntN(20), time.Month(1+rnd.IntN(12)), 1+rnd.IntN(28), rnd.IntN(24), 0, 0, rnd.IntN(1e9), time.UTC)
	clock := NewClock()
	clock.Set(start)
	ref := reference(t, clock.Now).(core.Leaser)
	sub := newStore(t, clock.Now).(core.Leaser)
	keys := UniqueKeyBuilder(t).AppendKeys(nil, "client", limits)
	leased := leasedKey(keys, limits)
	ctx := context.Background()
	var taken []string
	latest := start
	var lastRetry time.Duration
	var history []string
	fail := func(format string, args ...any) bool {
		t.Errorf("%s\nlimits: %s\nfrom %s, last steps (the reference's answers):\n  %s", fmt.Sprintf(format, args...),
			limitsString(limits), start.Format(time.RFC3339Nano), strings.Join(history[max(0, len(history)-12):], "\n  "))
		return false
	}
	for i := range leaseDiffSteps {
		move := leaseMove(rnd, conc.Period, lastRetry)
		clock.Advance(move)
		latest = later(latest, clock.Now())
		op := leaseOps[rnd.IntN(len(leaseOps))]
		lease := fmt.Sprintf("lease-%d", i)
		switch {
		case op == "release" && rnd.IntN(6) == 0:
			// The id the next step takes, if it takes: a release that runs
			// before its take (a take still in flight) leaves a tombstone.
			lease = fmt.Sprintf("lease-%d", i+1)
		case op != "acquire" && len(taken) > 0 && rnd.IntN(5) > 0:
			lease = taken[rnd.IntN(len(taken))]
		}
		where := fmt.Sprintf("step %d: %s after %s: %s %q", i+1, clock.Now().Sub(start), move, op, lease)
		switch op {
		case "acquire", "peek":
			cost := []int64{1, 1, 1, 2, 7}[rnd.IntN(5)]
			var want, got []core.Decision
			var errRef, errSub error
			if op == "peek" {
				cost = 0
				want, errRef = ref.Take(ctx, nil, keys, limits, 0)
				got, errSub = sub.Take(ctx, nil, keys, limits, 0)
			} else {
				want, errRef = ref.TakeLease(ctx, nil, keys, limits, cost, lease)
				got, errSub = sub.TakeLease(ctx, nil, keys, limits, cost, lease)
			}
			require.NoError(t, errRef, "reference store: %s", where)
			require.NoError(t, errSub, "store under test: %s", where)
			history = append(history, where+" -> "+decisionsString(want))
			if p := diffProblem(limits, cost, latest.Sub(clock.Now()), want, got); p != "" {
				return fail("%s: %s\nreference: %s\nunder test: %s", where, p, decisionsString(want), decisionsString(got))
			}
			lastRetry = want[leased].RetryAfter
			if op == "acquire" && allDecisionsAllowed(want) {
				taken = append(taken, lease)
			}
		case "release":
			require.NoError(t, ref.Release(ctx, keys[leased], conc, lease), "reference store: %s", where)
			require.NoError(t, sub.Release(ctx, keys[leased], conc, lease), "store under test: %s", where)
			history = append(history, where)
		case "renew":
			want, err := ref.Renew(ctx, keys[leased], conc, lease)
			require.NoError(t, err, "reference store: %s", where)
			got, err := sub.Renew(ctx, keys[leased], conc, lease)
			require.NoError(t, err, "store under test: %s", where)
			history = append(history, fmt.Sprintf("%s -> held %t", where, want))
			if want != got {
				return fail("%s: held %t, want %t", where, got, want)
			}
		}
	}
	return true
}

// leaseMove returns how far the clock moves before a step: mostly
// forward by a part of the TTL, sometimes not at all, by 1µs, to the last
// RetryAfter, or back.
func leaseMove(rnd *rand.Rand, ttl, lastRetry time.Duration) time.Duration {
	switch r := rnd.IntN(20); {
	case r < 4:
		return 0
	case r < 5:
		return us
	case r < 7 && lastRetry > 0:
		return lastRetry
	case r < 8:
		return -time.Duration(rnd.Int64N(int64(ttl))) - us // a clock stepped back
	case r < 9:
		return ttl
	}
	return ttl * time.Duration(1+rnd.IntN(6)) / 8
}
