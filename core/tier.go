package core

import (
	"context"
	"fmt"
	"log/slog"
	"math"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// A Tier is a named list of limits applied together to every client of
// that tier (free, pro, enterprise...). All limits of a tier are taken in
// one atomic store call.
//
// A limit's state is keyed by the client and the limit's Name, not by the
// tier: limits of the same name in different tiers share a client's state,
// so a client whose tier changes (an upgrade) keeps its usage, read with the
// new tier's numbers. Give limits different names for separate quotas.
// Unnamed limits derive their name from their numbers
// ([Limit.EffectiveName]): PerDay(1000) and PerDay(100000) are
// "1000-per-1d" and "100000-per-1d", separate quotas, so an upgrade would
// start the client from a full quota. [NewLimiter] warns (slog's default
// logger) when two tiers have unnamed limits of one algorithm and period
// whose names differ: name them.
type Tier struct {
	Name   string
	Limits []Limit
}

// RecipeTiers are the tiers of the recipe this library grew from: a token
// bucket per client of capacity 100 refilled at 10/s (free), 1,000 at 100/s
// (pro) and 10,000 at 1,000/s (enterprise). They make a reasonable start;
// real APIs usually add a daily quota per tier as a second limit.
func RecipeTiers() []Tier {
	return []Tier{
		{Name: "free", Limits: []Limit{PerSecond(10).WithBurst(100).WithName("per-second")}},
		{Name: "pro", Limits: []Limit{PerSecond(100).WithBurst(1000).WithName("per-second")}},
		{Name: "enterprise", Limits: []Limit{PerSecond(1000).WithBurst(10000).WithName("per-second")}},
	}
}

// ValidateTiers reports why tiers, with the default tier def ("": the
// first), could not be a limiter's: each limit is validated as by
// [Limit.Validate], and each tier as [NewLimiter] does (its name, at least
// one and at most 16 limits, no two of one name), with no two tiers of one
// name and def among them. It needs no limiter, so a policy file can be
// checked before any limiter takes it; [Limiter.CheckTiers] also checks
// what depends on the limiter (its store's leases).
func ValidateTiers(tiers []Tier, def string) error {
	_, err := (&Limiter{}).newTierSet(tiers, def)
	return err
}

// A TierResolver returns the tier name for a lookup key, typically by
// looking up the plan of an API key or account. The key is the request's
// [Request.TierKey] (with the middleware, what httplimit.WithTierKey returns: the
// raw API key, say), or its Identity when that is empty; an identity made
// by keyfunc.Header is a hash ("key:..."), which no plan table knows, so
// API-key clients need TierKey. The [Limiter] caches the answers by a hash
// of the key (see [WithTierResolver]); an error or an unknown tier name
// makes the limiter apply the default tier and report the error in
// [Result.TierErr].
type TierResolver func(ctx context.Context, lookupKey string) (string, error)

// warnUnnamedDrift warns, on slog's default logger, of each pair of tiers
// with unnamed limits of one algorithm and period (and calendar) whose
// derived names differ: a client changing between them would lose its
// usage, which is seldom meant. Named limits say what is meant.
func warnUnnamedDrift(tiers []Tier) {
	for i, a := range tiers {
		for _, b := range tiers[i+1:] {
			if x, y, ok := unnamedDrift(a, b); ok {
				slog.Warn(fmt.Sprintf("ratelimit: tiers %q and %q have unnamed %s limits of one period with different names (%q and %q): "+
					"a client whose tier changes starts from a full quota; give both one Name to keep its usage, or different Names if separate quotas are meant",
					a.Name, b.Name, x.Algorithm, x.EffectiveName(), y.EffectiveName()))
			}
		}
	}
}

// unnamedDrift returns the first unnamed limits of a and b of one
// algorithm, period and calendar whose derived names differ.
func unnamedDrift(a, b Tier) (x, y Limit, ok bool) {
	for _, x := range a.Limits {
		for _, y := range b.Limits {
			if x.Name == "" && y.Name == "" && x.Algorithm == y.Algorithm && x.Period == y.Period &&
				sameCalendar(x.Calendar, y.Calendar) && x.EffectiveName() != y.EffectiveName() {
				return x, y, true
			}
		}
	}
	return Limit{}, Limit{}, false
}

func sameCalendar(a, b Calendar) bool {
	return a.Unit == b.Unit && (a.Location == nil) == (b.Location == nil) &&
		(a.Location == nil || a.Location.String() == b.Location.String())
}

// maxLimitsPerTier bounds the keys of one store call.
const maxLimitsPerTier = 16

// plan is a validated tier, ready to build keys.
type plan struct {
	name        string
	limits      []Limit
	shares      []Limit  // limits divided among the nodes, for FailLocal
	suffixes    []string // keylayout.Suffix of each limit
	suffixBytes int      // the length of all suffixes together
	fits        int64    // the largest cost every rate limit can ever admit
	leased      []int    // the indices of the Concurrency limits
}

// newPlan validates t. nodes > 0 also prepares the local fallback limits.
func newPlan(t Tier, nodes int) (*plan, error) {
	if err := validateName("tier Name", t.Name, 64); err != nil {
		return nil, err
	}
	if len(t.Limits) == 0 {
		return nil, fmt.Errorf("ratelimit: tier %q: Limits must not be empty", t.Name)
	}
	if len(t.Limits) > maxLimitsPerTier {
		return nil, fmt.Errorf("ratelimit: tier %q: at most %d Limits, got %d", t.Name, maxLimitsPerTier, len(t.Limits))
	}
	p := &plan{name: t.Name, fits: math.MaxInt64} // fits: the smallest capacity, below
	seen := make(map[string]bool, len(t.Limits))
	for _, l := range t.Limits {
		if err := l.validate(); err != nil {
			return nil, fmt.Errorf("ratelimit: tier %q: %w", t.Name, err)
		}
		l.Name = l.EffectiveName()
		if seen[l.Name] {
			return nil, fmt.Errorf("ratelimit: tier %q: duplicate limit Name %q", t.Name, l.Name)
		}
		seen[l.Name] = true
		p.limits = append(p.limits, l)
		if l.Algorithm.leased() {
			// Any cost takes one lease: a concurrency limit never
			// finds a cost too high.
			p.leased = append(p.leased, len(p.limits)-1)
		} else if c := l.Capacity(); c < p.fits {
			p.fits = c
		}
		p.suffixes = append(p.suffixes, keylayout.Suffix(l.Name, l.Algorithm.Tag()))
		p.suffixBytes += len(p.suffixes[len(p.suffixes)-1])
		if nodes > 0 {
			p.shares = append(p.shares, l.share(int64(nodes)))
		}
	}
	return p, nil
}

// keys appends the store keys of the client id (already safe) to dst.
func (p *plan) keys(dst []string, head, id string) []string {
	for _, s := range p.suffixes {
		dst = append(dst, head+id+s)
	}
	return dst
}
