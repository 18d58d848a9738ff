package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrInvalidCost is returned by [Limiter.Take] for a negative cost.
var ErrInvalidCost = errors.New("ratelimit: cost must not be negative")

// A Limiter decides whether a client may make a request: it picks the
// client's tier, builds the keys of the tier's limits and takes them all
// in one atomic [Store] call.
//
// A Limiter is safe for concurrent use and needs no Close. Make one with
// [NewLimiter].
type Limiter struct {
	store   Store
	head    string // prefix + ":{"
	plans   map[string]*plan
	def     *plan
	tiers   *tierCache // nil without a resolver
	failure FailureMode
}

// A Request is one request of a client to be limited.
type Request struct {
	// Identity is who the client is: an IP, a hashed API key, a user id,
	// a composite ([Identity]). Any string is accepted; see [SafeIdentity].
	Identity string
	// Tier names the tier to apply; empty means ask the resolver, or the
	// default tier.
	Tier string
	// Cost is how much quota the request uses; 0 is a peek that charges
	// nothing.
	Cost int64
}

// NewLimiter returns a Limiter over store configured by opts. At least one
// tier is required ([WithLimits], [WithTier] or [WithTiers]). Invalid
// configuration is an error naming the field: a limit with zero or
// negative rate, period or burst, duplicate limit names in a tier, duplicate
// tier names, an unknown default tier, a bad key prefix.
func NewLimiter(store Store, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("ratelimit: store must not be nil")
	}
	c := config{prefix: DefaultPrefix, now: time.Now}
	for _, opt := range opts {
		if err := opt(&c); err != nil {
			return nil, err
		}
	}
	if len(c.tiers) == 0 {
		return nil, errors.New("ratelimit: tiers must not be empty: use WithLimits, WithTier or WithTiers")
	}
	l := &Limiter{store: store, head: c.prefix + ":{", plans: make(map[string]*plan, len(c.tiers)), failure: c.failure}
	for _, t := range c.tiers {
		p, err := newPlan(t)
		if err != nil {
			return nil, err
		}
		if l.plans[t.Name] != nil {
			return nil, fmt.Errorf("ratelimit: duplicate tier Name %q", t.Name)
		}
		l.plans[t.Name] = p
	}
	if c.defaultTier == "" {
		c.defaultTier = c.tiers[0].Name
	}
	if l.def = l.plans[c.defaultTier]; l.def == nil {
		return nil, fmt.Errorf("ratelimit: default tier %q is not among the tiers", c.defaultTier)
	}
	if c.resolver != nil {
		l.tiers = newTierCache(c.resolver, c.cacheTTL, c.cacheSize, c.now)
	}
	return l, nil
}

// MustNewLimiter is like [NewLimiter] but panics on invalid configuration.
// It is meant for package-level set-up with constant limits.
func MustNewLimiter(store Store, opts ...Option) *Limiter {
	l, err := NewLimiter(store, opts...)
	if err != nil {
		panic(err)
	}
	return l
}

// Allow is shorthand for AllowN(ctx, identity, 1).
func (l *Limiter) Allow(ctx context.Context, identity string) (Result, error) {
	return l.AllowN(ctx, identity, 1)
}

// AllowN is shorthand for Take(ctx, Request{Identity: identity, Cost: n}).
func (l *Limiter) AllowN(ctx context.Context, identity string, n int64) (Result, error) {
	return l.Take(ctx, Request{Identity: identity, Cost: n})
}

// Take charges req.Cost to every limit of the client's tier, atomically.
//
// The error is non-nil only when no decision could be made for the request
// itself (a negative cost). A store failure is not an error here: the
// Result is then degraded (Result.Degraded, Result.Err) and admits or
// denies the request according to the limiter's [FailureMode].
func (l *Limiter) Take(ctx context.Context, req Request) (Result, error) {
	if req.Cost < 0 {
		return Result{}, ErrInvalidCost
	}
	p, tierErr := l.plan(ctx, req)
	res := Result{Tier: p.name, TierErr: tierErr}
	keys := p.keys(make([]string, 0, len(p.limits)), l.head, SafeIdentity(req.Identity))
	ds, err := l.store.Take(ctx, make([]Decision, 0, len(p.limits)), keys, p.limits, req.Cost)
	if err != nil {
		return l.degraded(res, p, err), nil
	}
	res.Decisions = ds
	res.Allowed = allAllowed(ds)
	return res, nil
}

// Tier returns the limits of the named tier and whether it exists.
func (l *Limiter) Tier(name string) ([]Limit, bool) {
	p := l.plans[name]
	if p == nil {
		return nil, false
	}
	return append([]Limit(nil), p.limits...), true
}

// plan picks the tier of req: the named one, else the resolver's, else the
// default. The error says why a named or resolved tier was not used.
func (l *Limiter) plan(ctx context.Context, req Request) (*plan, error) {
	name := req.Tier
	if name == "" && l.tiers != nil {
		var err error
		if name, err = l.tiers.tier(ctx, req.Identity); err != nil {
			return l.def, fmt.Errorf("ratelimit: resolve tier: %w", err)
		}
	}
	if name == "" {
		return l.def, nil
	}
	if p := l.plans[name]; p != nil {
		return p, nil
	}
	return l.def, fmt.Errorf("ratelimit: unknown tier %q", name)
}

// degraded is the Result when the store failed: the limits' full quota is
// reported (nothing is known), and the failure mode decides.
func (l *Limiter) degraded(res Result, p *plan, err error) Result {
	res.Degraded = true
	res.Err = fmt.Errorf("ratelimit: store: %w", err)
	res.Allowed = l.failure == FailOpen
	res.Decisions = make([]Decision, len(p.limits))
	for i, lim := range p.limits {
		res.Decisions[i] = Decision{Limit: lim, Allowed: res.Allowed, Remaining: lim.Capacity()}
		if !res.Allowed {
			res.Decisions[i].Reason = Exhausted
			res.Decisions[i].RetryAfter = time.Second
		}
	}
	return res
}

func allAllowed(ds []Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}
