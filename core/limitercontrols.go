package core

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
	"github.com/ratelimitkit/ratelimit/internal/logsample"
)

// This file holds the controls of a [Limiter]: the methods that set them
// on one client by its raw identity (the Identity of its requests), and
// how a take applies them. A Limiter over a [ControlStore] keeps a
// snapshot of its space's controls ([Controls]) and reads the changes at
// most every [ControlSyncEvery], on the take path: a client with no control
// costs a take one atomic load.

// newControls returns the Controls of the limiter's space, when its store
// keeps controls, read on the take path; nil otherwise.
func (l *Limiter) newControls(prefix string, caps Capabilities) *Controls {
	c, err := NewControls(l.store, prefix)
	if err != nil {
		return nil
	}
	c.takes, c.timeout, c.local, c.poll = true, l.timeout, l.local, caps.Clock != nil
	c.onRead = l.controlsRead
	return c
}

// controlSnapshot returns the controls a take applies, nil when the store
// keeps none. It reads the changes first when a read is due and the take
// must wait for it ([Controls.due]). [Limiter.takeInto] has it written in
// line: one atomic load.
func (l *Limiter) controlSnapshot(ctx context.Context) *controlSnap {
	if l.ctl == nil {
		return nil
	}
	if s := l.ctl.snap.Load(); !s.due {
		return s
	}
	return l.ctl.refresh(ctx)
}

// applyControls applies the controls of the client id (safe) to a take
// under plan p of the tiers ts: an exempt client is admitted with full
// quotas and a blocked one denied, into res (answered), without a store
// call; a client with an override gets the plan it gives, q. s is not
// empty.
func (l *Limiter) applyControls(s *controlSnap, ts *tierSet, id string, p *plan, res *Result) (q *plan, answered bool) {
	cc := s.clients[id]
	if cc == nil {
		return p, false
	}
	var now time.Time // read only when a part ends: an override for good costs no clock read
	if cc.timed {
		now = l.now().Add(s.skew)
	}
	r := &cc.rec
	switch {
	case r.Block != nil && now.Before(r.Block.Until):
		res.setAll(p.limits, verdict{reason: Blocked, retryAfter: r.Block.Until.Sub(now), resetAfter: r.Block.Until.Sub(now)})
		return p, true
	case r.Exempt != nil && !ended(r.Exempt.Until, now):
		res.setExempt(p.limits)
		return p, true
	case r.Override != nil && !ended(r.Override.Until, now):
		return l.overridePlan(ts, cc, p), false
	}
	return p, false
}

// setAll makes r the Result of every limit of limits saying v.
func (r *Result) setAll(limits []Limit, v verdict) {
	r.Allowed, r.limits = v.allowed, limits
	vs := r.inline[:]
	if len(limits) > inlineVerdicts {
		r.spill = make([]verdict, len(limits))
		vs = r.spill
	}
	for i := range limits {
		vs[i] = v
	}
}

// setExempt makes r the Result of an exempt client: admitted, every limit
// at its full quota.
func (r *Result) setExempt(limits []Limit) {
	r.setAll(limits, verdict{allowed: true})
	for i := range limits {
		r.verdict(i).remaining = limits[i].Capacity()
	}
	r.Exempt = true
}

// An overridePlan is the plan a client's override makes of a base plan:
// cached in its clientControl, since the override does not change until
// its record does. A new tierSet ([Limiter.SetTiers]) has new plans, so the
// cache never outlives the tiers it was built from.
type overridePlan struct {
	base *plan
	p    *plan
}

// overridePlan returns the plan of cc's override for a client of tier p
// in ts: the override's Tier (when ts has it) or p, with the override's
// limits in place of those of the same name. An override that does not fit
// the tiers (it would add a Concurrency limit to a limiter without one) is
// not applied, and logged once per record and tier.
func (l *Limiter) overridePlan(ts *tierSet, cc *clientControl, p *plan) *plan {
	o := cc.rec.Override
	base := p
	if t := ts.plans[o.Tier]; o.Tier != "" && t != nil {
		base = t
	}
	if op := cc.plan.Load(); op != nil && op.base == base {
		return op.p
	}
	q, err := l.overridden(ts, base, o.Limits)
	if err != nil {
		q = base
		l.ctl.failLog.Emit(context.Background(), slog.LevelError, "ratelimit: override not applied",
			slog.String("tier", base.name), slog.String("error", logsample.ErrorText(err)))
	}
	cc.plan.Store(&overridePlan{base: base, p: q})
	return q
}

// overridden returns base with limits in place of its limits of the same
// name, as a plan; base itself when no name matches.
func (l *Limiter) overridden(ts *tierSet, base *plan, limits []Limit) (*plan, error) {
	merged := slices.Clone(base.limits)
	replaced := false
	for _, o := range limits {
		if i := slices.IndexFunc(merged, func(m Limit) bool { return m.Name == o.EffectiveName() }); i >= 0 {
			merged[i], merged[i].Name, replaced = o, o.EffectiveName(), true
		}
	}
	if !replaced {
		return base, nil
	}
	q, err := newPlan(Tier{Name: base.name, Limits: merged}, l.nodes)
	if err != nil {
		return nil, err
	}
	if len(q.leased) > len(base.leased) && !ts.leases() {
		return nil, fmt.Errorf("ratelimit: override of tier %q: limit %q is a Concurrency limit, and the limiter has none", base.name, q.limits[q.leased[0]].Name)
	}
	if err := l.checkLockouts(q); err != nil {
		return nil, err
	}
	return q, nil
}

// leases reports whether a tier of ts has a Concurrency limit: only then
// do the front ends release leases.
func (ts *tierSet) leases() bool {
	for _, p := range ts.plans {
		if len(p.leased) > 0 {
			return true
		}
	}
	return false
}

// controlsRead is told by the limiter's Controls of every read: it drops
// the cached denials of the clients that changed (all of them after a
// full read) and reports the active controls.
func (l *Limiter) controlsRead(changed []string, full bool, s *controlSnap) {
	if l.denied != nil {
		if full {
			l.denied.clear()
		}
		for _, id := range changed {
			l.denied.forget(id)
		}
	}
	l.reportActive(s)
}

// controls returns the limiter's Controls, or ErrNoControls.
func (l *Limiter) controls() (*Controls, error) {
	if l.ctl == nil {
		return nil, ErrNoControls
	}
	return l.ctl, nil
}

// SetOverride gives the client identity the limits of o in place of its
// tier's, on every node sharing the store, until o.Until (zero: until
// removed, kept for [MaxControlAge]). The client gets o.Tier's limits
// when o names a tier, else its own tier's, with each limit of o.Limits
// in place of the limit of the same Name: a limit whose Name and
// Algorithm stay keeps the client's usage. A take of the client reports
// [Result.Overridden].
//
// o must name a tier of the limiter or limits whose names a tier has, may
// not bring a [Concurrency] limit to a limiter without one, and its Reason
// is at most [MaxReasonLen] bytes; [Controls.SetOverride] says the rest.
// The override applies on this node at once, and on the others within
// [ControlSyncEvery] and a store round trip; cached denials of the client
// are dropped. It returns [ErrNoControls] when the store keeps no
// controls.
func (l *Limiter) SetOverride(ctx context.Context, identity string, o Override) error {
	c, err := l.controls()
	if err != nil {
		return err
	}
	if err := checkOverride(o, c.storeNow()); err != nil {
		return err
	}
	if err := l.checkOverride(o); err != nil {
		return err
	}
	if err := c.SetOverride(ctx, SafeIdentity(identity), o); err != nil {
		return err
	}
	l.tell(ctx, ControlEvent{Kind: ControlOverrideSet, Identity: identity, Tier: o.Tier, Limits: limitNames(o.Limits),
		Until: o.Until, Reason: o.Reason, By: operatorOr(ctx, o.By)})
	return nil
}

// checkOverride reports an override, valid in itself, that does not fit
// the limiter's tiers.
func (l *Limiter) checkOverride(o Override) error {
	ts := l.tierSet.Load()
	if o.Tier != "" && ts.plans[o.Tier] == nil {
		return fmt.Errorf("ratelimit: override: Tier %q is not a tier of the limiter", o.Tier)
	}
	for i, lim := range o.Limits {
		if !ts.hasLimit(lim.EffectiveName()) {
			return fmt.Errorf("ratelimit: override: Limits[%d]: no tier of the limiter has a limit named %q", i, lim.EffectiveName())
		}
	}
	for _, name := range slices.Sorted(maps.Keys(ts.plans)) {
		base := ts.plans[name]
		if o.Tier != "" {
			base = ts.plans[o.Tier]
		}
		if _, err := l.overridden(ts, base, o.Limits); err != nil {
			return err
		}
	}
	return nil
}

// hasLimit reports whether a tier of ts has a limit named name.
func (ts *tierSet) hasLimit(name string) bool {
	for _, p := range ts.plans {
		for _, l := range p.limits {
			if l.Name == name {
				return true
			}
		}
	}
	return false
}

// Override returns the override of the client identity in force, and
// whether it has one.
func (l *Limiter) Override(ctx context.Context, identity string) (Override, bool, error) {
	c, err := l.controls()
	if err != nil {
		return Override{}, false, err
	}
	return c.Override(ctx, SafeIdentity(identity))
}

// RemoveOverride removes the override of the client identity, on every
// node, as [Limiter.SetOverride] sets it.
func (l *Limiter) RemoveOverride(ctx context.Context, identity string) error {
	return l.change(ctx, identity, ControlEvent{Kind: ControlOverrideRemoved}, (*Controls).RemoveOverride)
}

// Block denies every request of the client identity for d (at most
// [MaxControlAge]) on every node, without a store call: a take answers
// [Blocked] on every limit, with RetryAfter until the block ends (the
// httplimit middleware: 429 with Retry-After). reason is logged and
// listed, never sent to the client. A block outranks an exemption. It
// applies on this node at once, and on the others within
// [ControlSyncEvery] and a store round trip.
func (l *Limiter) Block(ctx context.Context, identity string, d time.Duration, reason string) error {
	c, err := l.controls()
	if err != nil {
		return err
	}
	id := SafeIdentity(identity)
	if err := c.Block(ctx, id, d, reason); err != nil {
		return err
	}
	ev := ControlEvent{Kind: ControlBlocked, Identity: identity, Reason: reason, By: Operator(ctx)}
	if b := c.snap.Load().record(id, time.Time{}).Block; b != nil {
		ev.Until = b.Until
	}
	l.tell(ctx, ev)
	return nil
}

// Unblock lifts the block of the client identity and ends its lockouts
// (it deletes the lockout state of every limit with a [Lockout]), on
// every node: cached denials of the client are dropped.
func (l *Limiter) Unblock(ctx context.Context, identity string) error {
	c, err := l.controls()
	if err != nil {
		return err
	}
	id := SafeIdentity(identity)
	n, err := c.DeleteKeys(ctx, l.lockoutKeys(id))
	if err != nil {
		return err
	}
	if err := c.Unblock(ctx, id); err != nil {
		return err
	}
	l.tell(ctx, ControlEvent{Kind: ControlUnblocked, Identity: identity, Deleted: n, By: Operator(ctx)})
	return nil
}

// Exempt admits every request of the client identity for d (0: until
// removed, kept for [MaxControlAge]) on every node, without a store call:
// a take reports [Result.Exempt] and every limit at its full quota, and
// holds no lease. reason is logged and listed.
func (l *Limiter) Exempt(ctx context.Context, identity string, d time.Duration, reason string) error {
	c, err := l.controls()
	if err != nil {
		return err
	}
	id := SafeIdentity(identity)
	if err := c.Exempt(ctx, id, d, reason); err != nil {
		return err
	}
	ev := ControlEvent{Kind: ControlExempted, Identity: identity, Reason: reason, By: Operator(ctx)}
	if e := c.snap.Load().record(id, time.Time{}).Exempt; e != nil {
		ev.Until = e.Until
	}
	l.tell(ctx, ev)
	return nil
}

// Unexempt ends the exemption of the client identity on every node.
func (l *Limiter) Unexempt(ctx context.Context, identity string) error {
	return l.change(ctx, identity, ControlEvent{Kind: ControlUnexempted}, (*Controls).Unexempt)
}

// change makes the change f of the client identity and tells the
// observers ev.
func (l *Limiter) change(ctx context.Context, identity string, ev ControlEvent, f func(*Controls, context.Context, string) error) error {
	c, err := l.controls()
	if err != nil {
		return err
	}
	if err := f(c, ctx, SafeIdentity(identity)); err != nil {
		return err
	}
	ev.Identity, ev.By = identity, Operator(ctx)
	l.tell(ctx, ev)
	return nil
}

// Controls returns the clients of the limiter's space that have controls
// in force (set by any node, or by the ratelimit command), by safe
// identity.
func (l *Limiter) Controls(ctx context.Context) ([]ClientControls, error) {
	c, err := l.controls()
	if err != nil {
		return nil, err
	}
	return c.List(ctx)
}

// SyncControls reads the changes of the controls now, instead of at the
// next take that finds them [ControlSyncEvery] old. A limiter needs no
// call of it: it is for tests and for a node that wants the changes
// before it serves.
func (l *Limiter) SyncControls(ctx context.Context) error {
	c, err := l.controls()
	if err != nil {
		return err
	}
	return c.syncFresh(ctx)
}

// Reset forgets the usage of the client identity: it deletes the state
// of the named limits (every limit when none is named) of every tier, the
// client's override included, and their lockout state, and returns how
// many keys existed. Every node drops its cached denials of the client
// within [ControlSyncEvery] and a store round trip (this one at once).
// A name no tier has is an error, and nothing is deleted.
func (l *Limiter) Reset(ctx context.Context, identity string, limits ...string) (int64, error) {
	c, err := l.controls()
	if err != nil {
		return 0, err
	}
	id := SafeIdentity(identity)
	keys, err := l.resetKeys(id, limits)
	if err != nil {
		return 0, err
	}
	n, err := c.DeleteKeys(ctx, keys)
	if err != nil {
		return n, err
	}
	if err := c.Touch(ctx, id); err != nil {
		return n, err
	}
	l.tell(ctx, ControlEvent{Kind: ControlReset, Identity: identity, Limits: limits, Deleted: n, By: Operator(ctx)})
	return n, nil
}

// resetKeys returns the state and lockout keys of the limits named names
// (all when none) of every tier and of id's override.
func (l *Limiter) resetKeys(id string, names []string) ([]string, error) {
	all := l.allLimits(id)
	for _, name := range names {
		if !slices.ContainsFunc(all, func(lim Limit) bool { return lim.Name == name }) {
			return nil, fmt.Errorf("ratelimit: reset: no tier has a limit named %q", name)
		}
	}
	var keys []string
	for _, lim := range all {
		if len(names) > 0 && !slices.Contains(names, lim.Name) {
			continue
		}
		keys = appendNew(keys, keylayout.Key(l.ctl.space, id, lim.Name, lim.Algorithm.Tag()))
		keys = appendNew(keys, keylayout.Key(l.ctl.space, id, lim.Name, lockoutTag))
	}
	return keys, nil
}

// lockoutTag ends the key of the lockout state of a limit: reserved, no
// algorithm's tag.
const lockoutTag = "x"

// lockoutKeys returns the lockout state keys of every limit with a
// Lockout of the tiers and of id's override.
func (l *Limiter) lockoutKeys(id string) []string {
	var keys []string
	for _, lim := range l.allLimits(id) {
		if lim.Lockout.After > 0 {
			keys = appendNew(keys, keylayout.Key(l.ctl.space, id, lim.Name, lockoutTag))
		}
	}
	return keys
}

// allLimits returns the limits of every tier and of id's override, with
// their effective names.
func (l *Limiter) allLimits(id string) []Limit {
	var all []Limit
	ts := l.tierSet.Load()
	for _, name := range slices.Sorted(maps.Keys(ts.plans)) {
		all = append(all, ts.plans[name].limits...)
	}
	if cc := l.ctl.snap.Load().clients[id]; cc != nil && cc.rec.Override != nil {
		for _, lim := range cc.rec.Override.Limits {
			all = append(all, lim.WithName(lim.EffectiveName()))
		}
	}
	return all
}

// appendNew appends s to ss unless ss has it.
func appendNew(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}

// limitNames returns the effective names of limits.
func limitNames(limits []Limit) []string {
	var names []string
	for _, l := range limits {
		names = append(names, l.EffectiveName())
	}
	return names
}
