package storetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// The size of [RunDifferential]: differentialCases sequences of
// differentialSteps takes each.
const (
	differentialCases = 600
	differentialSteps = 24
)

// Bounds of [core.Limit.Validate], which the random limits reach.
const (
	maxRate   = 1 << 40
	maxPeriod = 366 * 24 * hour
)

// RunDifferential sends the same random takes, at the same instants, to a
// store of reference (core/memstore) and a store of newStore, and requires
// every decision to be identical in every field: docs/algorithms.md
// defines one answer for every take, and the stores must give it bit for
// bit. It also checks each decision for what no store may answer: a
// negative or overlong wait, a Remaining beyond the capacity, a Reason
// that contradicts Allowed, a LockedOut decision of a limit without a
// Lockout or longer than its longest lockout.
//
// Each of 600 cases draws one to three limits from the whole valid range
// (all six algorithms, calendar windows in zones with DST; Rate from 1 to 2⁴⁰, Period from 1µs to 366 days,
// Burst up to the bound on Burst × Period / Rate, the bounds themselves
// included; a third of them with a Lockout of one to four denials, whose
// durations are about the period's or at a bound), a start from 1970 to
// 2060, and 24 takes: costs of 0, 1, a
// few, about the capacity and far above it; gaps of 0, 1µs around the
// last RetryAfter, fractions and multiples of the limits' intervals and
// periods, and clock steps back (a failover to a server whose clock is
// behind), from 1µs to days, and back to 1970; before one take in 16 the
// fixed and sliding windows get a new random Period under the same names
// (a policy reload). In a case with a calendar
// window the clock never goes more than 20 hours behind its latest
// reading: a Redis store computes the boundaries it sends around the app's
// clock, here the test clock, and a reading further behind a key's window
// would fall outside them (redisstore.ErrCalendarSkew) where a memory
// store answers; in production the app's clock does not step back with
// the server's.
//
// Both stores must expire state on the test clock: a Redis store's keys
// expire on the server's own clock, which a test clock does not drive, so
// core/redisstore runs this with a script that records its TTLs on the
// test clock instead. The takes come from the seed of [SeedEnv] (printed
// on failure with the case, its limits and its last takes).
func RunDifferential(t *testing.T, reference, newStore NewStore) {
	seed := equivalenceSeed(t)
	rnd := rand.New(rand.NewPCG(seed, seed^0xd1ff))
	lockouts := core.CapabilitiesOf(newStore(t, NewClock().Now)).Lockouts
	for i := range differentialCases {
		c := newDiffCase(rnd)
		if !lockouts { // a store that counts none is compared without them
			for j := range c.limits {
				c.limits[j].Lockout = core.Lockout{}
			}
		}
		if !c.run(t, reference, newStore, rnd) {
			t.Errorf("seed %d, case %d of %d failed; replay with %s=%d", seed, i+1, differentialCases, SeedEnv, seed)
			return
		}
	}
	t.Run("Concurrency leases", func(t *testing.T) { runLeaseDifferential(t, reference, newStore, rnd) })
}

// A diffCase is one client's limits and the instant its takes start at.
type diffCase struct {
	limits   []core.Limit
	start    time.Time
	calendar bool // a limit is a calendar window: see maxCalendarBack
}

// maxCalendarBack is how far behind its latest reading the clock of a case
// with a calendar window may go: less than the shortest day (23 hours), so
// the boundaries computed around any reading hold the windows of the
// latest one (see RunDifferential).
const maxCalendarBack = 20 * hour

// calendarZones are the zones of the random calendar windows: DST changes
// of an hour, of half an hour (Lord Howe), at midnight (Havana) and across
// it (Beirut).
var calendarZones = []string{"UTC", "Europe/Madrid", "America/New_York", "America/Havana", "Asia/Beirut", "Australia/Lord_Howe"}

func newDiffCase(rnd *rand.Rand) diffCase {
	c := diffCase{start: randomStart(rnd)}
	n := 1 + rnd.IntN(3)
	for i := range n {
		l := randomLimit(rnd, fmt.Sprintf("l%d", i))
		c.limits = append(c.limits, l)
		c.calendar = c.calendar || l.Algorithm == core.CalendarWindow
	}
	return c
}

// run takes differentialSteps takes from both stores and reports whether
// they agreed and were sane.
func (c diffCase) run(t *testing.T, reference, newStore NewStore, rnd *rand.Rand) bool {
	clock := NewClock()
	clock.Set(c.start)
	keys := UniqueKeyBuilder(t).AppendKeys(nil, "client", c.limits)
	ref := client{store: reference(t, clock.Now), keys: keys, limits: c.limits}
	sub := client{store: newStore(t, clock.Now), keys: keys, limits: c.limits}
	latest := c.start
	var last []core.Decision
	var history []string
	for i := range differentialSteps {
		move, step := c.nextTime(rnd, clock.Now(), last)
		if limits, changed := newPeriods(rnd, ref.limits); changed {
			ref.limits, sub.limits = limits, limits
			step += ", window periods changed: " + limitsString(limits)
		}
		if c.calendar && latest.Sub(move) > maxCalendarBack {
			move = latest.Add(-maxCalendarBack)
			step += fmt.Sprintf(", held at %v behind the latest reading", maxCalendarBack)
		}
		clock.Set(move)
		latest = later(latest, move)
		cost := c.nextCost(rnd)
		want, err := ref.store.Take(context.Background(), nil, ref.keys, ref.limits, cost)
		require.NoError(t, err, "reference store")
		got, err := sub.store.Take(context.Background(), nil, sub.keys, sub.limits, cost)
		require.NoError(t, err, "store under test")
		history = append(history, fmt.Sprintf("take %d: %s, at %s, cost %d -> %s",
			i+1, step, move.UTC().Format(time.RFC3339Nano), cost, decisionsString(want)))
		problem := diffProblem(ref.limits, cost, latest.Sub(move), want, got)
		if problem != "" {
			t.Errorf("%s\nlimits: %s\nfrom %s, last takes (the reference's decisions):\n  %s\nreference: %s\nunder test: %s",
				problem, limitsString(ref.limits), c.start.UTC().Format(time.RFC3339Nano),
				strings.Join(history[max(0, len(history)-10):], "\n  "), decisionsString(want), decisionsString(got))
			return false
		}
		last = want
	}
	return true
}

// diffProblem describes how got differs from want, or what is wrong with
// want, or returns "". behind is how far the clock is behind the latest
// reading of the case, the most a key's time can be ahead of it.
func diffProblem(limits []core.Limit, cost int64, behind time.Duration, want, got []core.Decision) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d decisions, want %d", len(got), len(want))
	}
	for i, l := range limits {
		if got[i].Limit != l {
			return fmt.Sprintf("limit %d: Limit %+v, want %+v", i, got[i].Limit, l)
		}
		if diff := decisionDiff(want[i], got[i]); diff != "" {
			return fmt.Sprintf("limit %d (%s): %s differ", i, l.Algorithm, diff)
		}
		if p := insane(l, cost, behind, lockedOutTake(want), want[i]); p != "" {
			return fmt.Sprintf("limit %d (%s): %s", i, l.Algorithm, p)
		}
	}
	return ""
}

// lockedOutTake reports whether a limit of a take was denied LockedOut:
// the other limits of the take may then report their peek.
func lockedOutTake(ds []core.Decision) bool {
	for _, d := range ds {
		if d.Reason == core.LockedOut {
			return true
		}
	}
	return false
}

// insane names what no store may answer for l in a take of cost (locked
// when a limit of the take was denied LockedOut), or returns "".
func insane(l core.Limit, cost int64, behind time.Duration, locked bool, d core.Decision) string {
	if d.Reason == core.LockedOut {
		return insaneLockedOut(l, behind, d)
	}
	longest := behind + max(refill(l), 2*l.Period.Truncate(us)) + us
	switch {
	case d.Remaining < 0 || d.Remaining > l.Capacity():
		return fmt.Sprintf("Remaining %d outside [0, %d]", d.Remaining, l.Capacity())
	case d.ResetAfter < 0 || d.ResetAfter > longest:
		return fmt.Sprintf("ResetAfter %v outside [0, %v]", d.ResetAfter, longest)
	case d.RetryAfter < 0 || d.RetryAfter > longest:
		return fmt.Sprintf("RetryAfter %v outside [0, %v]", d.RetryAfter, longest)
	case d.Allowed != (d.Reason == core.NotDenied):
		return fmt.Sprintf("Allowed %v with Reason %v", d.Allowed, d.Reason)
	case d.Allowed && d.RetryAfter != 0:
		return fmt.Sprintf("allowed with RetryAfter %v", d.RetryAfter)
	case cost == 0 && !d.Allowed:
		return "a peek denied"
	case !locked && (d.Reason == core.CostTooHigh) != (cost > l.Capacity() && l.Algorithm != core.Concurrency):
		return fmt.Sprintf("Reason %v for cost %d of capacity %d", d.Reason, cost, l.Capacity())
	case d.Reason == core.CostTooHigh && d.RetryAfter != 0:
		return fmt.Sprintf("CostTooHigh with RetryAfter %v", d.RetryAfter)
	case d.Reason == core.Exhausted && d.RetryAfter <= 0:
		return "Exhausted without a RetryAfter"
	}
	return ""
}

// insaneLockedOut names what is wrong with d, a LockedOut decision of l,
// or returns "": only a limit with a Lockout gives one, denied with nothing
// remaining, for at most the longest lockout (longer by as much as the
// clock went back), and full again no sooner than it ends.
func insaneLockedOut(l core.Limit, behind time.Duration, d core.Decision) string {
	longest := behind + l.Lockout.Effective().Max + us
	switch {
	case l.Lockout.After == 0:
		return "LockedOut without a Lockout"
	case d.Allowed || d.Remaining != 0:
		return fmt.Sprintf("LockedOut with Allowed %v, Remaining %d", d.Allowed, d.Remaining)
	case d.RetryAfter <= 0 || d.RetryAfter > longest:
		return fmt.Sprintf("LockedOut with RetryAfter %v outside (0, %v]", d.RetryAfter, longest)
	case d.ResetAfter < d.RetryAfter:
		return fmt.Sprintf("LockedOut with ResetAfter %v before its RetryAfter %v", d.ResetAfter, d.RetryAfter)
	}
	return ""
}

// refill is Burst × Period / Rate, the time to refill the whole capacity
// (in µs, as the stores see the Period), at most 366 days.
func refill(l core.Limit) time.Duration {
	return time.Duration(float64(l.Period.Truncate(us)) * float64(l.Capacity()) / float64(l.Rate))
}

// nextTime returns the instant of the next take and how it was reached.
func (c diffCase) nextTime(rnd *rand.Rand, now time.Time, last []core.Decision) (time.Time, string) {
	l := c.limits[rnd.IntN(len(c.limits))]
	interval := max(us, l.Period.Truncate(us)/time.Duration(l.Rate))
	r := rnd.Float64()
	if retry := longestRetry(last); retry > 0 && r < 0.25 {
		d := retry + time.Duration(rnd.IntN(3)-1)*us
		return now.Add(d), fmt.Sprintf("+%v (RetryAfter %+v)", d, d-retry)
	}
	var d time.Duration
	switch r := rnd.Float64(); {
	case r < 0.25:
		d = 0
	case r < 0.45:
		d = randomUpTo(rnd, interval)
	case r < 0.6:
		d = randomUpTo(rnd, l.Period)
	case r < 0.7:
		d = randomUpTo(rnd, refill(l))
	case r < 0.77:
		d = randomUpTo(rnd, 3*l.Period)
	case r < 0.8:
		d = -us
	case r < 0.87:
		d = -randomUpTo(rnd, interval)
	case r < 0.93:
		d = -randomUpTo(rnd, l.Period)
	case r < 0.98:
		d = -randomUpTo(rnd, 2*24*hour)
	default:
		t := time.Unix(0, 0).Add(randomUpTo(rnd, hour))
		return t, "back to 1970"
	}
	if d < 0 {
		return now.Add(d), fmt.Sprintf("back %v", -d)
	}
	return now.Add(d), fmt.Sprintf("+%v", d)
}

// longestRetry returns the longest RetryAfter of decisions.
func longestRetry(ds []core.Decision) time.Duration {
	var longest time.Duration
	for _, d := range ds {
		longest = max(longest, d.RetryAfter)
	}
	return longest
}

// nextCost returns the cost of the next take, often close to the capacity
// of one of the limits.
func (c diffCase) nextCost(rnd *rand.Rand) int64 {
	b := c.limits[rnd.IntN(len(c.limits))].Capacity()
	switch r := rnd.Float64(); {
	case r < 0.15:
		return 0
	case r < 0.45:
		return 1
	case r < 0.6:
		return 2 + rnd.Int64N(4)
	case r < 0.75:
		return max(0, b-1+rnd.Int64N(3)) // b − 1, b or b + 1
	case r < 0.85:
		return 1 + rnd.Int64N(b)
	case r < 0.9:
		return max(1, b/2)
	case r < 0.97:
		return b + 1 + rnd.Int64N(b)
	case r < 0.99:
		return maxRate + 1
	default:
		return math.MaxInt64
	}
}

// randomStart returns the instant a case starts at: mostly 2025, also the
// epoch of the stores (2024) and around it, 1970, and later years.
func randomStart(rnd *rand.Rand) time.Time {
	epoch := keylayout.FromEpochMicros(0).UTC()
	switch r := rnd.Float64(); {
	case r < 0.45:
		return Start()
	case r < 0.55:
		return time.Unix(0, 0)
	case r < 0.62:
		return epoch
	case r < 0.67:
		return epoch.Add(-us)
	case r < 0.75:
		return time.Date(2060, time.June, 1, 12, 0, 0, 0, time.UTC)
	default:
		return epoch.Add(randomUpTo(rnd, 6*366*24*hour).Truncate(us))
	}
}

// randomLimit returns a valid limit named name, often at a bound of
// [core.Limit.Validate].
func randomLimit(rnd *rand.Rand, name string) core.Limit {
	l := core.Limit{Name: name, Algorithm: core.Algorithm(rnd.IntN(6)), Period: randomPeriod(rnd)}
	if l.Algorithm == core.CalendarWindow {
		zone := calendarZones[rnd.IntN(len(calendarZones))]
		loc, err := time.LoadLocation(zone)
		if err != nil {
			panic(fmt.Sprintf("storetest: time.LoadLocation(%q): %v (install tzdata or import time/tzdata)", zone, err))
		}
		l.Calendar = core.Calendar{Unit: core.CalendarUnit(1 + rnd.IntN(3)), Location: loc}
		l.Period = l.Calendar.Unit.Period()
	}
	l.Rate = randomCount(rnd, min(maxRate, int64(l.Period/us)))
	if l.Algorithm == core.GCRA || l.Algorithm == core.TokenBucket {
		if r := rnd.Float64(); r < 0.75 {
			l.Burst = randomCount(rnd, maxBurst(l))
		}
	}
	if rnd.Float64() < 0.3 {
		l.Lockout = randomLockout(rnd, l.Period)
	}
	if err := l.Validate(); err != nil {
		panic(fmt.Sprintf("storetest: random limit %+v: %v", l, err))
	}
	return l
}

// newPeriods returns, before one take in 16, limits with a new random
// Period for each fixed and sliding window of limits (same names, so the
// same keys: a policy that changed the period), and whether it did.
func newPeriods(rnd *rand.Rand, limits []core.Limit) ([]core.Limit, bool) {
	if rnd.IntN(16) != 0 {
		return limits, false
	}
	next := slices.Clone(limits)
	changed := false
	for i, l := range next {
		if l.Algorithm != core.FixedWindow && l.Algorithm != core.SlidingWindow {
			continue
		}
		l.Period = max(randomPeriod(rnd), time.Duration(l.Rate)*us) // a Rate a window of µs can count
		if l.Validate() == nil {
			next[i], changed = l, true
		}
	}
	return next, changed
}

// randomLockout returns a valid Lockout for a limit of period: a few
// denials (so that the 24 takes of a case lock out, often more than once),
// counted within a window, and lockouts and a cool-down, of lengths about
// the period's, sometimes at a bound; Multiplier, Max and Cooldown are
// often left to their defaults.
func randomLockout(rnd *rand.Rand, period time.Duration) core.Lockout {
	around := func() time.Duration { // about the period, within the bounds
		switch r := rnd.Float64(); {
		case r < 0.05:
			return us
		case r < 0.1:
			return maxPeriod
		}
		return min(maxPeriod, randomUpTo(rnd, 3*period))
	}
	lo := core.Lockout{After: 1 + rnd.Int64N(4), Within: around(), For: around()}
	lo.Multiplier = []int64{0, 1, 2, 3, 10, maxRate}[rnd.IntN(6)]
	if rnd.Float64() < 0.5 {
		lo.Max = max(lo.For, around())
	}
	if rnd.Float64() < 0.5 {
		lo.Cooldown = around()
	}
	return lo
}

// randomPeriod returns a Period from 1µs to 366 days: a bound, a usual
// one, or any, sometimes with nanoseconds the stores truncate.
func randomPeriod(rnd *rand.Rand) time.Duration {
	usual := []time.Duration{sec, 2 * sec, 10 * sec, minute, 3 * minute, hour, 24 * hour}
	switch r := rnd.Float64(); {
	case r < 0.08:
		return us
	case r < 0.16:
		return maxPeriod
	case r < 0.45:
		return usual[rnd.IntN(len(usual))]
	case r < 0.9:
		return time.Duration(logUniform(rnd, int64(maxPeriod/us))) * us
	default:
		return min(maxPeriod, time.Duration(logUniform(rnd, int64(maxPeriod/us)))*us+time.Duration(rnd.IntN(1000)))
	}
}

// randomCount returns a count from 1 to most: 1, most, or any in between.
func randomCount(rnd *rand.Rand, most int64) int64 {
	switch r := rnd.Float64(); {
	case r < 0.15:
		return 1
	case r < 0.3:
		return most
	case r < 0.4:
		return max(1, most-rnd.Int64N(3))
	default:
		return logUniform(rnd, most)
	}
}

// maxBurst returns the largest Burst [core.Limit.Validate] accepts for
// l's Rate and Period (Burst × Period / Rate at most 366 days), found by
// bisection so that the cases follow the validation, whatever it is.
func maxBurst(l core.Limit) int64 {
	lo, hi := int64(1), int64(maxRate) // Burst lo is valid
	for lo < hi {
		mid := hi - (hi-lo)/2
		if l.WithBurst(mid).Validate() == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// logUniform returns an integer from 1 to most, uniform in its logarithm.
func logUniform(rnd *rand.Rand, most int64) int64 {
	return min(most, max(1, int64(math.Exp(rnd.Float64()*math.Log(float64(most))))))
}

// randomUpTo returns a whole number of µs from 1µs to d (1µs when d is
// shorter), uniformly.
func randomUpTo(rnd *rand.Rand, d time.Duration) time.Duration {
	if d < us {
		return us
	}
	return time.Duration(1+rnd.Int64N(int64(d/us))) * us
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func decisionsString(ds []core.Decision) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = decisionString(d)
	}
	return strings.Join(parts, " ")
}

func limitsString(ls []core.Limit) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("{%s Rate:%d Period:%v (%dµs) Burst:%d", l.Algorithm, l.Rate, l.Period, l.Period/us, l.Burst)
		if l.Algorithm == core.CalendarWindow {
			parts[i] = fmt.Sprintf("{%s Rate:%d per %s in %s", l.Algorithm, l.Rate, l.Calendar.Unit, l.Calendar.Location)
		}
		if lo := l.Lockout; lo.After > 0 {
			parts[i] += fmt.Sprintf(" Lockout:{After:%d Within:%v For:%v Multiplier:%d Max:%v Cooldown:%v}",
				lo.After, lo.Within, lo.For, lo.Multiplier, lo.Max, lo.Cooldown)
		}
		parts[i] += "}"
	}
	return strings.Join(parts, " ")
}
