package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// Changes are what changes from one policy to another ([Diff]): per
// limiter, its default tier and each tier's limits, and what becomes of
// the clients' counters. String renders them as text.
type Changes struct {
	// Limiters are the limiters that change, in the new policy's order,
	// then those it removes.
	Limiters []LimiterChanges
}

// A Change says how a limiter, tier or limit changes.
type Change uint8

// The changes of a limiter, tier or limit.
const (
	Modified Change = iota // in both policies, with different fields
	Added                  // only in the new policy
	Removed                // only in the old policy
)

// LimiterChanges are the changes of one limiter.
type LimiterChanges struct {
	Name   string
	Change Change
	// OldDefault and NewDefault are the default tiers, when they differ.
	OldDefault, NewDefault string
	Tiers                  []TierChanges
	// Counters say which counters are kept and which restart: a client's
	// state is one store key per limit name and algorithm, which every
	// tier with that limit shares.
	Counters []CounterChange
}

// TierChanges are the changes of one tier of a limiter.
type TierChanges struct {
	Name   string
	Change Change
	Limits []LimitChange // in the new tier's order, then those it drops
}

// A LimitChange is one limit added, removed or changed in a tier, matched
// by name.
type LimitChange struct {
	Name     string
	Change   Change
	Old, New core.Limit // the zero Limit where there is none
	Fields   []FieldChange
}

// A FieldChange is one field of a limit, old and new, as a policy writes
// them ("-" for a field not given).
type FieldChange struct{ Field, Old, New string }

// A Fate is what becomes of the counters of a limit name and algorithm.
type Fate uint8

// The fates of counters.
const (
	// CountersKept: the store keys stay, and each client's usage carries
	// over, read with the new numbers.
	CountersKept Fate = iota
	// CountersNew: a limit no tier had; every client starts from a full
	// quota (unless an older policy's counters of that name are still
	// alive).
	CountersNew
	// CountersRestart: the counters are read afresh: every client starts
	// from a full quota.
	CountersRestart
	// CountersDropped: no tier counts the limit any more; its counters
	// expire unread.
	CountersDropped
)

var fateNames = [...]string{"kept", "new", "restart", "dropped"}

// String returns "kept", "new", "restart" or "dropped".
func (f Fate) String() string { return fateNames[f] }

// A CounterChange is the fate of the counters of one limit name and
// algorithm of a limiter.
type CounterChange struct {
	Limit     string
	Algorithm core.Algorithm
	Fate      Fate
	Why       string
}

// Diff returns what changes from old to new: per limiter, the default
// tier, the tiers and limits added, removed or changed (field by field),
// and which counters are kept and which restart. Limits are matched by
// name within a tier.
func Diff(old, new *Policy) *Changes {
	c := &Changes{}
	for _, n := range new.limiters {
		if lc, changed := diffLimiter(old.limiter(n.name), n); changed {
			c.Limiters = append(c.Limiters, lc)
		}
	}
	for _, o := range old.limiters {
		if new.limiter(o.name) == nil {
			lc, _ := diffLimiter(o, nil)
			c.Limiters = append(c.Limiters, lc)
		}
	}
	return c
}

// Empty reports whether nothing changes.
func (c *Changes) Empty() bool { return len(c.Limiters) == 0 }

// diffLimiter compares the limiter o with n (either may be nil) and
// reports whether anything changes.
func diffLimiter(o, n *limiterPolicy) (LimiterChanges, bool) {
	var oldTiers, newTiers []core.Tier
	lc := LimiterChanges{Change: Modified}
	switch {
	case o == nil:
		lc.Name, lc.Change, newTiers = n.name, Added, n.tiers
	case n == nil:
		lc.Name, lc.Change, oldTiers = o.name, Removed, o.tiers
	default:
		lc.Name, oldTiers, newTiers = n.name, o.tiers, n.tiers
		if o.def != n.def {
			lc.OldDefault, lc.NewDefault = o.def, n.def
		}
	}
	lc.Tiers = diffTiers(oldTiers, newTiers)
	lc.Counters = counterChanges(oldTiers, newTiers)
	changed := lc.Change != Modified || lc.OldDefault != "" || len(lc.Tiers) > 0
	return lc, changed
}

// diffTiers compares two lists of tiers, matched by name.
func diffTiers(old, new []core.Tier) []TierChanges {
	var out []TierChanges
	for _, n := range new {
		o, found := findTier(old, n.Name)
		tc := TierChanges{Name: n.Name, Change: Modified, Limits: diffLimits(o.Limits, n.Limits)}
		if !found {
			tc.Change = Added
		}
		if !found || len(tc.Limits) > 0 {
			out = append(out, tc)
		}
	}
	for _, o := range old {
		if _, found := findTier(new, o.Name); !found {
			out = append(out, TierChanges{Name: o.Name, Change: Removed, Limits: diffLimits(o.Limits, nil)})
		}
	}
	return out
}

func findTier(tiers []core.Tier, name string) (core.Tier, bool) {
	for _, t := range tiers {
		if t.Name == name {
			return t, true
		}
	}
	return core.Tier{}, false
}

func findLimit(limits []core.Limit, name string) (core.Limit, bool) {
	for _, l := range limits {
		if l.EffectiveName() == name {
			return l, true
		}
	}
	return core.Limit{}, false
}

// diffLimits compares the limits of one tier, matched by name.
func diffLimits(old, new []core.Limit) []LimitChange {
	var out []LimitChange
	for _, n := range new {
		name := n.EffectiveName()
		o, found := findLimit(old, name)
		switch fields := fieldChanges(o, n); {
		case !found:
			out = append(out, LimitChange{Name: name, Change: Added, New: n})
		case len(fields) > 0:
			out = append(out, LimitChange{Name: name, Change: Modified, Old: o, New: n, Fields: fields})
		}
	}
	for _, o := range old {
		if _, found := findLimit(new, o.EffectiveName()); !found {
			out = append(out, LimitChange{Name: o.EffectiveName(), Change: Removed, Old: o})
		}
	}
	return out
}

// fieldChanges lists the fields of a limit that differ from o to n.
func fieldChanges(o, n core.Limit) []FieldChange {
	of, nf := limitFieldValues(o), limitFieldValues(n)
	var out []FieldChange
	for i := range of {
		if of[i].value != nf[i].value {
			out = append(out, FieldChange{Field: of[i].field, Old: of[i].value, New: nf[i].value})
		}
	}
	return out
}

type fieldValue struct{ field, value string }

// limitFieldValues writes the fields of l as a policy does, "-" for one
// not set, in a fixed order.
func limitFieldValues(l core.Limit) []fieldValue {
	zone := "-"
	if l.Calendar.Location != nil {
		zone = l.Calendar.Location.String()
	}
	lo := l.Lockout
	return []fieldValue{
		{"algorithm", l.Algorithm.String()},
		{"rate", strconv.FormatInt(l.Rate, 10)},
		{"period", shortDuration(l.Period)},
		{"burst", burstOrDash(l)},
		{"calendar", orDash(l.Calendar.Unit.String())},
		{"zone", zone},
		{"lockout.after", intOrDash(lo.After)},
		{"lockout.within", durationOrDash(lo.Within)},
		{"lockout.for", durationOrDash(lo.For)},
		{"lockout.multiplier", intOrDash(lo.Multiplier)},
		{"lockout.max", durationOrDash(lo.Max)},
		{"lockout.cooldown", durationOrDash(lo.Cooldown)},
	}
}

// burstOrDash writes the burst of l when it is not the rate, as a policy
// leaves it out.
func burstOrDash(l core.Limit) string {
	if l.Capacity() == l.Rate {
		return "-"
	}
	return strconv.FormatInt(l.Capacity(), 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func intOrDash(v int64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

func durationOrDash(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return shortDuration(d)
}

// A counterKey is what a client's counters are stored under: a limit's
// name and algorithm (the store key's suffix), the same in every tier.
type counterKey struct {
	name string
	alg  core.Algorithm
}

// counters returns the limits of tiers by counter key, and the keys in
// the order the tiers first have them.
func counters(tiers []core.Tier) (map[counterKey][]core.Limit, []counterKey) {
	m := map[counterKey][]core.Limit{}
	var order []counterKey
	for _, t := range tiers {
		for _, l := range t.Limits {
			k := counterKey{l.EffectiveName(), l.Algorithm}
			if _, seen := m[k]; !seen {
				order = append(order, k)
			}
			m[k] = append(m[k], l)
		}
	}
	return m, order
}

// counterChanges says what becomes of each counter key of old and new
// whose limits are not the same in both: kept or restarted,
// the worst over each pair of an old and a new limit of the key
// (counterFate), new, or dropped.
func counterChanges(old, new []core.Tier) []CounterChange {
	om, oorder := counters(old)
	nm, norder := counters(new)
	var out []CounterChange
	for _, k := range norder {
		o, kept := om[k]
		switch {
		case !kept:
			out = append(out, CounterChange{k.name, k.alg, CountersNew, newWhy(oorder, k)})
		case !sameLimits(o, nm[k]):
			fate, why := worstFate(o, nm[k])
			out = append(out, CounterChange{k.name, k.alg, fate, why})
		}
	}
	for _, k := range oorder {
		if _, kept := nm[k]; !kept {
			out = append(out, CounterChange{k.name, k.alg, CountersDropped, droppedWhy(norder, k)})
		}
	}
	return out
}

// sameLimits reports whether a and b are the same limits, field by field.
func sameLimits(a, b []core.Limit) bool {
	return slices.EqualFunc(a, b, func(x, y core.Limit) bool { return len(fieldChanges(x, y)) == 0 })
}

// worstFate is the worst counterFate of an old limit of o and a new one of
// n, all of one counter key.
func worstFate(o, n []core.Limit) (Fate, string) {
	fate, why := CountersKept, ""
	for _, x := range o {
		for _, y := range n {
			if f, w := counterFate(x, y); f > fate || why == "" {
				fate, why = f, w
			}
		}
	}
	return fate, why
}

// newWhy says why the counters of k, which old does not have, are new.
func newWhy(old []counterKey, k counterKey) string {
	for _, ok := range old {
		if ok.name == k.name {
			return fmt.Sprintf("the algorithm was %s: another algorithm keeps other state, so every client starts from a full quota", ok.alg)
		}
	}
	return "every client starts from a full quota"
}

// droppedWhy says why the counters of k, which new does not have, go.
func droppedWhy(new []counterKey, k counterKey) string {
	for _, nk := range new {
		if nk.name == k.name {
			return fmt.Sprintf("counted as %s now; this state expires unread", nk.alg)
		}
	}
	return "no tier has the limit now; its counters expire unread"
}

// counterFate says what becomes of the counters of a limit kept by name
// and algorithm, whose numbers change from o to n. The stores keep, per
// algorithm: GCRA the time the client is ahead by, a token bucket its
// tokens, a fixed or sliding window the number of its window, the window's
// length and its count, a sliding log the times of the requests of the
// last period, a calendar window the start of its window and its count, a
// concurrency limit the leases in flight.
func counterFate(o, n core.Limit) (Fate, string) {
	switch {
	case windowed(n.Algorithm) && n.Period > o.Period:
		return CountersKept, fmt.Sprintf("the window grows from %s to %s: a client's count carries over into the %s window that holds "+
			"the start of its last %s window (then it counts the same requests), else the client starts from a full quota",
			shortDuration(o.Period), shortDuration(n.Period), shortDuration(n.Period), shortDuration(o.Period))
	case windowed(n.Algorithm) && n.Period < o.Period:
		return CountersRestart, fmt.Sprintf("the window shrinks from %s to %s: every client starts from a full quota, except that a count "+
			"carries over into the %s window that holds the start of its %s window",
			shortDuration(o.Period), shortDuration(n.Period), shortDuration(n.Period), shortDuration(o.Period))
	case n.Algorithm == core.CalendarWindow && !sameCalendar(o.Calendar, n.Calendar):
		return CountersRestart, "another calendar: every client starts afresh, except that a count carries over when the new window starts where the old one did (it counts the same requests)"
	case n.Algorithm == core.SlidingLog && n.Period > o.Period:
		return CountersKept, fmt.Sprintf("the log holds only the requests of the last %s: for the first %s the window counts fewer than it will",
			shortDuration(o.Period), shortDuration(n.Period))
	case n.Algorithm == core.GCRA:
		return CountersKept, "each client's usage carries over as time owed, read at the new rate"
	case n.Algorithm == core.Concurrency:
		return CountersKept, "the leases in flight are kept"
	}
	return CountersKept, "each client's count carries over, read against the new numbers"
}

// windowed reports whether a counts in windows numbered by its period,
// which the stores renumber when the period changes.
func windowed(a core.Algorithm) bool { return a == core.FixedWindow || a == core.SlidingWindow }

func sameCalendar(a, b core.Calendar) bool {
	return a.Unit == b.Unit && a.Location.String() == b.Location.String()
}

// String renders the changes as text, one limiter after the other:
//
//	limiter api
//	  default tier: free -> pro
//	  tier free
//	    ~ burst: rate 10 -> 20, burst 100 -> 200
//	    - daily (1000 per 24h, fixed_window)
//	  counters
//	    kept     burst (gcra): each client's usage carries over ...
//	    dropped  daily (fixed_window): no tier has the limit now ...
//
// "no changes" when there are none.
func (c *Changes) String() string {
	if c.Empty() {
		return "no changes\n"
	}
	var b strings.Builder
	for _, l := range c.Limiters {
		writeLimiter(&b, l)
	}
	return b.String()
}

var marks = [...]string{Modified: "~", Added: "+", Removed: "-"}

func writeLimiter(b *strings.Builder, l LimiterChanges) {
	switch l.Change {
	case Added:
		fmt.Fprintf(b, "+ %s: added\n", limiterTitle(l.Name))
	case Removed:
		fmt.Fprintf(b, "- %s: removed\n", limiterTitle(l.Name))
	default:
		fmt.Fprintf(b, "%s\n", limiterTitle(l.Name))
	}
	if l.OldDefault != "" {
		fmt.Fprintf(b, "  default tier: %s -> %s\n", l.OldDefault, l.NewDefault)
	}
	for _, t := range l.Tiers {
		writeTier(b, t)
	}
	if len(l.Counters) > 0 {
		b.WriteString("  counters\n")
	}
	for _, cc := range l.Counters {
		fmt.Fprintf(b, "    %-8s %s (%s): %s\n", cc.Fate, cc.Limit, cc.Algorithm, cc.Why)
	}
}

func writeTier(b *strings.Builder, t TierChanges) {
	switch t.Change {
	case Added:
		fmt.Fprintf(b, "  + tier %s\n", t.Name)
	case Removed:
		fmt.Fprintf(b, "  - tier %s (a client the resolver puts in it gets the default tier)\n", t.Name)
	default:
		fmt.Fprintf(b, "  tier %s\n", t.Name)
	}
	for _, l := range t.Limits {
		switch l.Change {
		case Added:
			fmt.Fprintf(b, "    + %s (%s)\n", l.Name, describeLimit(l.New))
		case Removed:
			fmt.Fprintf(b, "    - %s (%s)\n", l.Name, describeLimit(l.Old))
		default:
			fields := make([]string, len(l.Fields))
			for i, f := range l.Fields {
				fields[i] = fmt.Sprintf("%s %s -> %s", f.Field, f.Old, f.New)
			}
			fmt.Fprintf(b, "    %s %s: %s\n", marks[Modified], l.Name, strings.Join(fields, ", "))
		}
	}
}

// displayName names a limiter in a one-line message.
func displayName(name string) string {
	if name == "" {
		return "the limiter"
	}
	return "limiter " + name
}
