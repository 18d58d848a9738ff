package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/ratelimitkit/ratelimit/core"
)

// Apply gives each limiter of limiters, by name, the tiers p describes for
// it, all or none: every limiter first checks its new tiers
// ([core.Limiter.CheckTiers]), and only when all of them take theirs does
// any change ([core.Limiter.SetTiers]). Each limiter switches at once: a
// decision applies its old tiers or its new ones, never a mix (a request
// that two limiters check may meet the new tiers in one and the old in
// the other, for the moment between their switches).
//
// The names must match both ways, so that a typing error in either cannot
// leave a limiter on its old limits unnoticed: a limiter of limiters that
// p does not describe is an error, and so is a limiter of p that limiters
// does not have, unless limiters holds its name with a nil *core.Limiter:
// the way to say "another service applies that one" when several services
// share one policy file.
func Apply(p *Policy, limiters map[string]*core.Limiter) error {
	if err := match(p, limiters); err != nil {
		return err
	}
	var plans []change
	for _, lp := range p.limiters {
		l := limiters[lp.name]
		if l == nil {
			continue
		}
		if err := l.CheckTiers(lp.tiers, lp.def); err != nil {
			return p.errAt(lp, err)
		}
		plans = append(plans, change{lp, l, inForce(l)})
	}
	for i, c := range plans {
		if err := c.limiter.SetTiers(cloneTiers(c.policy.tiers), c.policy.def); err != nil {
			return errors.Join(p.errAt(c.policy, err), rollBack(plans[:i]))
		}
	}
	return nil
}

// A change is one limiter's part of an Apply: what it takes and what it
// had.
type change struct {
	policy  *limiterPolicy
	limiter *core.Limiter
	had     tierSet
}

// A tierSet is the tiers a limiter applies and its default tier.
type tierSet struct {
	tiers []core.Tier
	def   string
}

// inForce returns the tiers l applies now.
func inForce(l *core.Limiter) tierSet {
	var ts tierSet
	for _, name := range l.Tiers() {
		limits, _ := l.Tier(name)
		ts.tiers = append(ts.tiers, core.Tier{Name: name, Limits: limits})
	}
	ts.def = l.DefaultTier()
	return ts
}

// rollBack gives the limiters of done back the tiers they had: SetTiers
// fails after CheckTiers took the same tiers only when something else
// changed the limiter in between.
func rollBack(done []change) error {
	var errs []error
	for _, c := range done {
		if err := c.limiter.SetTiers(c.had.tiers, c.had.def); err != nil {
			errs = append(errs, fmt.Errorf("ratelimit: policy: restoring the tiers of limiter %q: %w", c.policy.name, err))
		}
	}
	return errors.Join(errs...)
}

// match checks that p and limiters name the same limiters, and that no
// limiter is given twice.
func match(p *Policy, limiters map[string]*core.Limiter) error {
	seen := map[*core.Limiter]string{}
	for _, name := range slices.Sorted(maps.Keys(limiters)) {
		l := limiters[name]
		if l == nil {
			continue
		}
		if other, dup := seen[l]; dup {
			return fmt.Errorf("ratelimit: policy: limiters %q and %q are one *core.Limiter: each name needs its own", other, name)
		}
		seen[l] = name
		if p.limiter(name) == nil {
			return fmt.Errorf("ratelimit: policy: %s describes no limiter %q, which the application has (it describes %s)",
				p.file, name, quoteNames(p.Limiters()))
		}
	}
	for _, lp := range p.limiters {
		if _, ok := limiters[lp.name]; !ok {
			return &Error{File: p.file, Line: lp.line, Path: string(lp.path), Err: fmt.Errorf(
				"the application has no limiter %q (it has %s); when another service applies it, give its name a nil *core.Limiter",
				lp.name, quoteNames(slices.Sorted(maps.Keys(limiters))))}
		}
	}
	return nil
}

// errAt is err, about the limiter lp, placed at its line.
func (p *Policy) errAt(lp *limiterPolicy, err error) *Error {
	return &Error{File: p.file, Line: lp.line, Path: string(lp.path), Err: fmt.Errorf("%s", trimCore(err))}
}

// quoteNames lists names quoted, "none" when there are none.
func quoteNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return joinNames(q)
}
