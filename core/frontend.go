package core

import (
	"context"
	"maps"
	"slices"
	"time"
)

// This file holds the seams a front end (the httplimit middleware, a gRPC
// interceptor) is built from: everything it needs of a [Limiter] beyond
// [Limiter.Take], [Limiter.Release] and [Limiter.Renew], so that no front
// end reaches into the limiter's unexported state.

// Check decides whether req.Cost would fit every limit of its tier now,
// without charging it: the "check before" half of charging by outcome
// (an HTTP front end charges after the handler, by its status). It
// returns the Result of the check, which admits or denies the request as
// a take would (a cached denial, or else a peek of the store admitted when
// every limit has at least Cost Remaining), and charge, the request to
// give [Limiter.Charge] after the work: req with the tier the check
// applied (no second lookup), or with Cost 0 when there is nothing to
// charge (a denial, a peek, a request the check charged already).
//
// When the peek says the cost does not fit, the store decides by a take,
// which then denies (and fills the deny cache) as for any request, or,
// when the quota refilled since the peek, admits and charges: charge's
// Cost is then 0. A check takes no lease: a tier with a [Concurrency]
// limit cannot be charged by outcome. An exempt client is admitted with
// nothing to charge; a blocked one is denied ([Limiter.Block]). Observers
// see the check as the request's decision. The errors are
// [Limiter.Take]'s.
func (l *Limiter) Check(ctx context.Context, req Request) (res Result, charge Request, err error) {
	charged, err := l.check(ctx, req, &res)
	if err != nil || charged || !res.Allowed {
		req.Cost = 0
	}
	req.Tier, req.TierKey = res.Tier, "" // the tier the check applied
	return res, req, err
}

// check is [Limiter.Check] into res; charged reports that the check
// itself charged the request.
func (l *Limiter) check(ctx context.Context, req Request, res *Result) (charged bool, err error) {
	if req.Cost <= 0 {
		return false, l.takeInto(ctx, &req, res) // a peek, or ErrInvalidCost
	}
	if err := ctx.Err(); err != nil {
		return false, callerGone(err)
	}
	ts := l.tierSet.Load()
	p, tierErr := l.plan(ctx, ts, &req)
	id := SafeIdentity(req.Identity)
	cs := l.controlSnapshot(ctx)
	q, answered := p, false
	if cs != nil && len(cs.clients) != 0 {
		q, answered = l.applyControls(cs, ts, id, p, res)
	}
	if answered {
		charged = true // an exempt client is charged nothing, now or after the work
	} else if charged, err = l.checkTake(ctx, req, id, q, cs, res); err != nil {
		*res = Result{}
		return false, err
	}
	res.Overridden = q != p
	l.decided(ctx, &req, q, tierErr, res)
	return charged, nil
}

// checkTake is the store side of [Limiter.check], for the client id
// (safe) under plan p, with the controls seen.
func (l *Limiter) checkTake(ctx context.Context, req Request, id string, p *plan, seen *controlSnap, res *Result) (charged bool, err error) {
	if req.Cost > p.fits { // a take is denied, CostTooHigh: it charges nothing
		return false, l.takeFromStore(ctx, id, req.Cost, p, res)
	}
	if l.denied != nil && l.denied.holds(denyKey{identity: id, plan: p}, req.Cost, l.now, res) {
		return false, nil
	}
	if err := l.takeFromStore(ctx, id, 0, p, res); err != nil {
		return false, err
	}
	if !res.Allowed || fits(res, req.Cost) {
		return false, nil
	}
	*res = Result{}
	if err := l.takeCached(ctx, &req, id, p, seen, res); err != nil {
		return false, err
	}
	return res.Allowed && (!res.Degraded || res.Fallback), nil
}

// fits reports whether every limit of the peek res has cost Remaining.
func fits(res *Result, cost int64) bool {
	for i := range res.Len() {
		if res.verdict(i).remaining < cost {
			return false
		}
	}
	return true
}

// Charge takes req, the charge a [Limiter.Check] returned, after the work
// it was checked for: the "charge after" half of charging by outcome. It
// is a take like [Limiter.Take], deny cache included (a denial charges
// nothing and fills the cache), that no observer sees: the check was the
// request's decision. A Cost of 0 charges nothing and asks no store; nor
// does the charge of a client exempt or blocked since the check, which
// returns the Result its controls give. The caller decides what to do with a failure: the work is done, so an HTTP
// front end logs it and answers nothing.
func (l *Limiter) Charge(ctx context.Context, req Request) (res Result, err error) {
	if req.Cost == 0 {
		return Result{}, nil
	}
	if req.Cost < 0 {
		return Result{}, ErrInvalidCost
	}
	ts := l.tierSet.Load()
	p, _ := l.plan(ctx, ts, &req)
	id := SafeIdentity(req.Identity)
	cs := l.controlSnapshot(ctx)
	q, answered := p, false
	if cs != nil && len(cs.clients) != 0 {
		q, answered = l.applyControls(cs, ts, id, p, &res)
	}
	if answered {
		return res, nil // exempt or blocked since the check: nothing to charge
	}
	if err := l.takeCached(ctx, &req, id, q, cs, &res); err != nil {
		return Result{}, err
	}
	res.Overridden = q != p
	return res, nil
}

// DefaultTier returns the name of the tier applied when a request names
// none and no resolver answers ([WithDefaultTier]).
func (l *Limiter) DefaultTier() string { return l.tierSet.Load().def.name }

// Tiers returns the names of the limiter's tiers, sorted; [Limiter.Tier]
// returns the limits of each.
func (l *Limiter) Tiers() []string { return slices.Sorted(maps.Keys(l.tierSet.Load().plans)) }

// HasTierResolver reports whether the limiter looks tiers up with a
// [TierResolver] ([WithTierResolver]): only then is a [Request.TierKey]
// read.
func (l *Limiter) HasTierResolver() bool { return l.tiers != nil }

// ConcurrencyLimit returns a tier with a [Concurrency] limit and the name
// of that limit; ok is false when no tier has one. A front end whose
// admitted requests may then hold a [Lease] must give each back
// ([Limiter.Release]) and renew it while the work runs ([Limiter.Renew]).
// Tiers are visited in name order, so the answer is the same on every
// call.
func (l *Limiter) ConcurrencyLimit() (tier, limit string, ok bool) {
	ts := l.tierSet.Load()
	for _, name := range slices.Sorted(maps.Keys(ts.plans)) {
		if p := ts.plans[name]; len(p.leased) > 0 {
			return p.name, p.limits[p.leased[0]].Name, true
		}
	}
	return "", "", false
}

// Now returns the time by the limiter's clock: its store's, when the store
// has one of its own (an injected clock in tests), else time.Now. A front
// end that writes times (an epoch reset field) reads them here, so they
// agree with the store's decisions.
func (l *Limiter) Now() time.Time { return l.now() }
