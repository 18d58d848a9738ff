package core

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"maps"
	"slices"

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
	"github.com/ratelimitkit/ratelimit/internal/logsample"
	"github.com/ratelimitkit/ratelimit/internal/secrethash"
)

var (
	// ErrInvalidCost is returned by [Limiter.Take] for a negative cost.
	ErrInvalidCost = errors.New("ratelimit: cost must not be negative")
	// ErrStoreUnavailable marks store errors that mean the store cannot
	// answer now (timeouts, refused connections, a cluster without quorum),
	// as opposed to errors that mean a bug (a script error, a wrong key
	// type). Stores wrap the first kind with it; only those trip the
	// breaker and let the [FailureMode] decide. Other store errors are
	// returned by [Limiter.Take].
	ErrStoreUnavailable = errors.New("ratelimit: store unavailable")
	// ErrBreakerOpen is the [Result.Err] of requests decided without a
	// store call because the circuit breaker is open. It wraps
	// [ErrStoreUnavailable].
	ErrBreakerOpen = fmt.Errorf("%w: circuit breaker open", ErrStoreUnavailable)
	// ErrNotRun marks a store error of a take that certainly did not run:
	// it was never sent (its caller gave up while it waited to be sent,
	// say), so it charged nothing and holds no lease. A [Limiter] sends no
	// release for such a take. Stores wrap it only when they know; an
	// error without it means the take may have run.
	ErrNotRun = errors.New("ratelimit: take not run")
)

// A Limiter decides whether a client may make a request: it picks the
// client's tier, builds the keys of the tier's limits and takes them all
// in one atomic [Store] call, under a timeout, behind an optional circuit
// breaker and deny cache.
//
// [Limiter.Take] (and its shorthands Allow and AllowN) answers at once,
// admitted or denied: what HTTP middleware wants. Callers outside HTTP that
// would rather wait their turn use [Limiter.WaitTake] (Wait, WaitN). A tier
// with a [Concurrency] limit also needs the end of the request: give
// [Result.Lease] back with [Limiter.Release] (and extend it with
// [Limiter.Renew] for a request longer than the lease TTL).
//
// Over a [ControlStore], a Limiter also applies the controls operators set
// on single clients: overrides of their limits, blocks, exemptions
// ([Limiter.SetOverride], [Limiter.Block], [Limiter.Exempt], [Limiter.Reset]).
//
// A Limiter is safe for concurrent use and needs no Close: nothing it
// starts outlives its use. (Over a ControlStore, the take that finds the
// controls a second old reads them in a goroutine that ends within the
// limiter's timeout, and a timer marks the next read due.) Make one with
// [NewLimiter].
type Limiter struct {
	store     Store
	head      string                  // keylayout.Head of the prefix
	tierSet   atomic.Pointer[tierSet] // the tiers in force (SetTiers replaces them)
	nodes     int                     // WithFallback's nodes, for the plans of SetTiers
	tiers     *tierCache              // nil without a resolver
	failure   FailureMode
	timeout   time.Duration
	breakers  *breakers  // nil with WithoutBreaker, or for a NonBlocking store
	denied    *denyCache // nil with WithDenyCache(0)
	fallback  Store
	observers []Observer
	quiet     bool // the observers act only on degraded Results (the default failure log)
	shadow    bool
	local     bool                    // the store is NonBlocking (Capabilities)
	shard     func(key string) string // the store's Shard (Capabilities), or nil
	now       clockFunc               // the store's Clock (Capabilities), or time.Now
	keyIdent  bool                    // a TierKey the resolver knows is the Identity (WithTierKeyIdentity)
	pending   pendingReleases
	renewLog  *logsample.Sampler // failed renewals no RenewObserver hears

	ctl         *Controls // the controls of the limiter's space; nil when the store keeps none
	ctlObserved bool      // an observer is a ControlObserver
	active      [2]int    // the overrides and blocks in force last reported (under ctl.mu)

	waitTimer  timerFunc                         // the sleeps of WaitTake; nil: time.NewTimer
	waitJitter func(time.Duration) time.Duration // nil: uniform in [0, max]
}

// A Request is one request of a client to be limited.
type Request struct {
	// Identity is who the client is: an IP, a hashed API key, a user id,
	// a composite ([Identity]). Any string is accepted; see [SafeIdentity].
	Identity string
	// Tier names the tier to apply; empty means ask the resolver, or the
	// default tier.
	Tier string
	// TierKey is what the [TierResolver] looks the tier up by when Tier is
	// empty: a raw API key, an account id. Empty means the Identity. The
	// limiter keeps only a hash of it (the key of the resolver's cached
	// answer); it is not part of any store key, and observers see the
	// Request with TierKey cleared, so it reaches no log or metric.
	TierKey string
	// Cost is how much quota the request uses; 0 is a peek that charges
	// nothing.
	Cost int64
	// Route is the route template the request matched ("/users/:id"), for
	// observers (metrics labels). It is not part of any key: see
	// httplimit.WithRouteScope for per-route quotas.
	Route string
}

// NewLimiter returns a Limiter over store configured by opts. At least one
// tier is required ([WithLimits], [WithTier] or [WithTiers]). Invalid
// configuration is an error naming the field: a limit with zero or
// negative rate, period or burst, duplicate limit names in a tier, duplicate
// tier names, an unknown default tier, a bad key prefix. Options never
// override each other silently: a single-valued option given twice, or two
// that contradict each other ([WithFallback] and [WithFailureMode](FailOpen),
// [WithBreaker] and [WithoutBreaker]), are an error naming both; so is a
// timeout the store cannot keep ([Capabilities].CheckTimeout).
func NewLimiter(store Store, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("ratelimit: store must not be nil")
	}
	c := config{prefix: DefaultPrefix, timeout: DefaultTimeout, denyCache: DefaultDenyCacheSize, given: map[string]bool{}}
	for _, opt := range opts {
		if err := opt(&c); err != nil {
			return nil, err
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	caps := CapabilitiesOf(store)
	if caps.CheckTimeout != nil {
		if err := caps.CheckTimeout(c.timeout); err != nil {
			return nil, fmt.Errorf("ratelimit: WithTimeout(%s) does not fit the store: %w", c.timeout, err)
		}
	}
	quiet := len(c.observers) == 0
	if quiet {
		c.observers = []Observer{failureLog()}
	}
	l := &Limiter{
		store: store, head: keylayout.Head(c.prefix), nodes: c.nodes,
		failure: c.failure, timeout: c.timeout, fallback: c.fallback, observers: c.observers,
		quiet: quiet, shadow: c.shadow, now: clockOf(caps), keyIdent: c.keyIdent,
		local: caps.NonBlocking, shard: caps.Shard, renewLog: logsample.New(nil),
	}
	ts, err := l.newTierSet(c.tiers, c.defaultTier)
	if err != nil {
		return nil, err
	}
	l.tierSet.Store(ts)
	warnUnnamedDrift(c.tiers)
	if c.resolver.resolve != nil {
		l.tiers = newTierCache(c.resolver, ts.def.name, l.now)
	}
	if cfg, on := c.breakerConfig(l.local); on {
		l.breakers = newBreakers(cfg, l.now, l.breakerChanged)
	}
	if c.denyCache > 0 {
		l.denied = newDenyCache(c.denyCache)
	}
	l.ctl = l.newControls(c.prefix, caps)
	for _, o := range l.observers {
		_, ok := o.(ControlObserver)
		l.ctlObserved = l.ctlObserved || ok
	}
	return l, nil
}

// A tierSet is the tiers a [Limiter] applies, validated: replaced whole
// by [Limiter.SetTiers], so a decision reads one set, never a mix.
type tierSet struct {
	plans map[string]*plan
	def   *plan
}

// newTierSet validates tiers, with the default tier def ("": the first),
// into a tierSet.
func (l *Limiter) newTierSet(tiers []Tier, def string) (*tierSet, error) {
	if len(tiers) == 0 {
		return nil, errors.New("ratelimit: tiers must not be empty: use WithLimits, WithTier or WithTiers")
	}
	ts := &tierSet{plans: make(map[string]*plan, len(tiers))}
	for _, t := range tiers {
		p, err := newPlan(t, l.nodes)
		if err != nil {
			return nil, err
		}
		if ts.plans[t.Name] != nil {
			return nil, fmt.Errorf("ratelimit: duplicate tier Name %q", t.Name)
		}
		ts.plans[t.Name] = p
	}
	if def == "" {
		def = tiers[0].Name
	}
	if ts.def = ts.plans[def]; ts.def == nil {
		return nil, fmt.Errorf("ratelimit: default tier %q is not among the tiers", def)
	}
	if err := l.checkLeaser(ts); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(ts.plans)) {
		if err := l.checkLockouts(ts.plans[name]); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// checkLockouts reports a limit of p with a [Lockout] over a store (or
// fallback store) that does not count lockouts.
func (l *Limiter) checkLockouts(p *plan) error {
	if err := checkLockouts(l.store, "store", p.name, p.limits); err != nil {
		return err
	}
	return checkLockouts(l.fallback, "fallback store", p.name, p.limits)
}

// checkLeaser reports a tier of ts with a Concurrency limit over a store
// (or fallback store) that cannot hold leases ([Capabilities].Leases).
func (l *Limiter) checkLeaser(ts *tierSet) error {
	for _, p := range ts.plans {
		if len(p.leased) == 0 {
			continue
		}
		name := p.limits[p.leased[0]].Name
		for i, s := range []Store{l.store, l.fallback} {
			role := [...]string{"store", "fallback store"}[i]
			if s == nil {
				continue
			}
			if _, err := leaserOf(s); err != nil {
				return fmt.Errorf("ratelimit: tier %q: limit %q is a Concurrency limit, but the %s %w", p.name, name, role, err)
			}
		}
	}
	return nil
}

// SetTiers replaces the limiter's tiers, at once: a decision made while it
// runs applies the old tiers or the new ones, never a mix. def names the
// default tier ("": the first of tiers). On an error ([Limiter.CheckTiers])
// the old tiers stay in force.
//
// A client's usage is kept for every limit whose name and algorithm are
// kept (its store keys are the same): a limit renamed, or given another
// algorithm, starts afresh. A FixedWindow or SlidingWindow limit whose
// Period changes keeps a client's count where the stored window started in
// the current window of the new Period, and starts that client afresh
// otherwise (docs/algorithms.md, "When the period changes"); the same
// holds for a client moved between tiers whose limits of one name have
// different Periods. Cached denials are dropped, so that a raised limit
// applies at once on this node.
func (l *Limiter) SetTiers(tiers []Tier, def string) error {
	ts, err := l.checkTiers(tiers, def)
	if err != nil {
		return err
	}
	warnUnnamedDrift(tiers)
	l.tierSet.Store(ts)
	if l.denied != nil {
		l.denied.clear()
	}
	return nil
}

// CheckTiers reports whether [Limiter.SetTiers] would take tiers, with the
// default tier def, without changing anything: they are validated as by
// [NewLimiter], and they may gain a [Concurrency] limit only when the
// limiter had one already, since the front ends arrange the release of
// leases when they are built. It lets a caller with several limiters check
// them all before it changes any.
func (l *Limiter) CheckTiers(tiers []Tier, def string) error {
	_, err := l.checkTiers(tiers, def)
	return err
}

func (l *Limiter) checkTiers(tiers []Tier, def string) (*tierSet, error) {
	ts, err := l.newTierSet(tiers, def)
	if err != nil {
		return nil, err
	}
	if _, _, had := l.ConcurrencyLimit(); !had {
		for _, name := range slices.Sorted(maps.Keys(ts.plans)) {
			if p := ts.plans[name]; len(p.leased) > 0 {
				return nil, fmt.Errorf("ratelimit: tier %q: limit %q is a Concurrency limit, and the limiter had none: "+
					"front ends built without one release no leases; build a new limiter (restart) to add it",
					p.name, p.limits[p.leased[0]].Name)
			}
		}
	}
	return ts, nil
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
func (l *Limiter) Allow(ctx context.Context, identity string) (res Result, err error) {
	// Allow, AllowN and Take each decide into their own result: inlined
	// into one another, the inner one's result would be a local, copied
	// into the outer one's.
	err = l.takeInto(ctx, &Request{Identity: identity, Cost: 1}, &res)
	return res, err
}

// AllowN is shorthand for Take(ctx, Request{Identity: identity, Cost: n}).
func (l *Limiter) AllowN(ctx context.Context, identity string, n int64) (res Result, err error) {
	err = l.takeInto(ctx, &Request{Identity: identity, Cost: n}, &res)
	return res, err
}

// Take charges req.Cost to every limit of the client's tier, atomically.
// When the tier has [Concurrency] limits and the request is admitted with
// a cost above zero, the Result holds a [Lease] that the caller must give
// back with [Limiter.Release] when the request ends (else it expires
// after the lease TTL). When the store call fails (a timeout, a caller
// that gave up), the lease may have been taken all the same: Take then
// releases it at once, under the limiter's timeout.
//
// A store that is unavailable (timeout, refused connection, open breaker)
// is not an error here: the Result is then degraded (Result.Degraded,
// Result.Err) and admits or denies according to the [FailureMode]. The
// error is non-nil when no decision could be made: a negative cost, a ctx
// that is done (the caller gave up: its error, wrapped, never a degraded
// admission), or a store error that means a bug (not
// [ErrStoreUnavailable]), which must be seen, not silently failed open.
func (l *Limiter) Take(ctx context.Context, req Request) (res Result, err error) {
	// res, the result itself, is filled in place by every step, which get
	// req by pointer too: a Result is a few hundred bytes, and copying it
	// (or a Request) through each of them costs more than the memory
	// store's arithmetic.
	err = l.takeInto(ctx, &req, &res)
	return res, err
}

// takeInto is [Limiter.Take], deciding into res, which is zero and stays
// zero when it returns an error.
func (l *Limiter) takeInto(ctx context.Context, req *Request, res *Result) error {
	if req.Cost < 0 {
		return ErrInvalidCost
	}
	if err := ctx.Err(); err != nil {
		return callerGone(err)
	}
	ts := l.tierSet.Load() // once: the decision applies one set of tiers
	p, tierErr := ts.def, error(nil)
	if req.Tier == "" && l.tiers != nil {
		key := tierKeyHash(lookupKey(req))
		hit, err := l.deniedUnresolved(ctx, ts, req, key, res)
		if err != nil || hit != nil {
			return l.answered(ctx, req, hit, err, res)
		}
		p, tierErr = l.resolved(ctx, ts, req, key)
	} else if req.Tier != "" { // else the default tier, without a call
		p, tierErr = l.plan(ctx, ts, req)
	}
	id := SafeIdentity(req.Identity)
	var cs *controlSnap // l.controlSnapshot, in line
	if c := l.ctl; c != nil {
		if cs = c.snap.Load(); cs.due {
			cs = c.refresh(ctx)
		}
	}
	q, answered := p, false
	if cs != nil && len(cs.clients) != 0 {
		q, answered = l.applyControls(cs, ts, id, p, res)
	}
	if !answered {
		if err := l.takeCached(ctx, req, id, q, cs, res); err != nil {
			*res = Result{} // whatever a step left there is no decision
			return err
		}
		res.Overridden = q != p
	}
	l.decided(ctx, req, q, tierErr, res)
	return nil
}

// deniedUnresolved answers req, whose tier is not resolved yet and whose
// lookup key hashes to key, from the deny cache when its identity has a
// cached denial under ts, the tiers in force, and the tier cache has no
// fresh answer for key: a denied client inventing keys costs the resolver
// a few calls ([denyCache.unresolved] says when it is asked all the same).
// It returns the denial's plan, or nil when req must resolve its tier.
func (l *Limiter) deniedUnresolved(ctx context.Context, ts *tierSet, req *Request, key [sha256.Size]byte, res *Result) (*plan, error) {
	if l.denied == nil || l.denied.empty() || req.Cost == 0 {
		return nil, nil
	}
	if e, ok, fresh := l.tiers.cached(key); fresh || ok && e.tier != "" {
		// Known without a call, or a key the resolver knows whose
		// answer expired: asked once per TTL, so that a plan change
		// applies (and, with WithTierKeyIdentity, it is its own client).
		return nil, nil
	}
	p, err := l.denied.unresolved(ctx, ts, SafeIdentity(req.Identity), key, req.Cost, l.now, min(l.tiers.ttl, deniedLookupEvery), res)
	if err != nil {
		return nil, callerGone(err)
	}
	return p, nil
}

// deniedLookupEvery is how often a denied client may have a key resolved
// that the tier cache holds no answer for, past the first
// [deniedLookupBurst]: a client inventing keys costs the resolver 8 calls,
// then one a second.
const deniedLookupEvery = time.Second

// answered ends a take that the deny cache answered under p, or that
// failed with err.
func (l *Limiter) answered(ctx context.Context, req *Request, p *plan, err error, res *Result) error {
	if err != nil {
		*res = Result{}
		return err
	}
	l.decided(ctx, req, p, nil, res)
	return nil
}

// decided completes res, the store's decision of req under p, with what
// the limiter adds (the tier, the policy field, shadow mode) and tells the
// observers.
func (l *Limiter) decided(ctx context.Context, req *Request, p *plan, tierErr error, res *Result) {
	res.Tier, res.TierErr = p.name, tierErr
	if l.shadow && !res.Allowed && !res.Degraded {
		res.Allowed, res.Shadowed = true, true
	}
	if !l.quiet || res.Degraded || res.TierErr != nil {
		l.observe(ctx, *req, res)
	}
}

// observe tells the observers about res, the decision of req.
func (l *Limiter) observe(ctx context.Context, req Request, res *Result) {
	req.TierKey = "" // a raw secret, maybe: observers never see it
	for _, o := range l.observers {
		o.Decided(ctx, req, *res)
	}
}

// callerGone wraps the error of a caller's context that is done.
func callerGone(err error) error {
	return errwrap.Wrap("ratelimit: ", "caller gone", err)
}

// takeCached decides req, of the client id (its safe identity), with the
// deny cache, the breaker and the store, into res; seen is the snapshot
// of the controls the take applied (nil without controls). The deny cache is keyed by the safe identity, as store keys are, so
// it holds at most [MaxIdentityLen] bytes of any identity. A cost no limit
// can ever admit bypasses it: the store answers [CostTooHigh], which
// waiting cannot change.
func (l *Limiter) takeCached(ctx context.Context, req *Request, id string, p *plan, seen *controlSnap, res *Result) error {
	if l.denied == nil || req.Cost == 0 || req.Cost > p.fits {
		err := l.takeFromStore(ctx, id, req.Cost, p, res)
		if err == nil && !res.Allowed && l.ctlObserved && req.Cost > 0 {
			l.lockedOut(ctx, req, p, res)
		}
		return err
	}
	dk := denyKey{identity: id, plan: p}
	var hit bool
	var probe chan struct{}
	var err error
	if !l.denied.empty() { // else a miss, without a call
		hit, probe, err = l.denied.lookup(ctx, dk, req.Cost, l.now, res)
	}
	if err != nil {
		return callerGone(err)
	}
	if hit {
		return nil
	}
	err = l.takeFromStore(ctx, id, req.Cost, p, res)
	if err == nil && !res.Allowed && !res.Degraded {
		if l.ctlObserved {
			l.lockedOut(ctx, req, p, res)
		}
		if l.ctl == nil || l.ctl.snap.Load().gen == seen.gen {
			// Else the node read a change of the controls while the store
			// answered: a reset it read may postdate this denial, whose
			// caching would outlast the reset. A read that found nothing
			// new (every second) keeps the generation: a flood's denials
			// are still cached across it.
			var lookup [sha256.Size]byte
			if req.Tier == "" && l.tiers != nil {
				lookup = tierKeyHash(lookupKey(req))
			}
			l.denied.put(id, p, lookup, req.Cost, res, l.now())
		}
	}
	if probe != nil {
		l.denied.release(dk, probe, err == nil && !res.Degraded && res.Allowed && res.binding().Remaining == 0)
	}
	return err
}

// takeFromStore decides a take of cost by the client id (already safe) with
// the store, behind the breaker, into res. The store's decisions land in a
// pooled buffer, which res copies, so a Result of up to four limits costs
// no allocation; keys for a NonBlocking store ([Capabilities]) come from
// that scratch too: they live only for the call. A take of cost > 0 in a
// tier with [Concurrency] limits also draws a lease id (and, when
// admitted, allocates its [Lease]).
func (l *Limiter) takeFromStore(ctx context.Context, id string, cost int64, p *plan, res *Result) error {
	sc := scratches.Get().(*scratch)
	t := takeCall{id: id, cost: cost}
	if cost > 0 && len(p.leased) > 0 {
		t.lease = newLeaseID()
	}
	if l.local {
		t.keys = sc.build(p, l.head, id)
	} else {
		t.keys = p.keys(make([]string, 0, len(p.limits)), l.head, id)
	}
	err := l.decide(ctx, sc, &t, p, res)
	scratches.Put(sc)
	return err
}

// A takeCall is one store call of a client: its keys, the cost, and the lease
// id to hold on its Concurrency limits ("" when none is taken).
type takeCall struct {
	id    string // the safe identity
	keys  []string
	cost  int64
	lease string
}

// decide takes t with the store and turns its answer into res.
func (l *Limiter) decide(ctx context.Context, sc *scratch, t *takeCall, p *plan, res *Result) error {
	var ds []Decision
	var err error
	if l.local && l.breakers == nil && t.lease == "" { // nothing to guard: call it here, one frame less
		ds, err = l.store.Take(ctx, sc.ds[:0], t.keys, p.limits, t.cost)
	} else {
		ds, err = l.callStore(ctx, sc.ds[:0], t, p.limits)
	}
	sc.ds = ds[:0] // keep what the store grew
	if err == nil && len(ds) != len(p.limits) {
		err = fmt.Errorf("%d decisions for %d limits", len(ds), len(p.limits))
	}
	if err != nil && t.lease != "" && !errors.Is(err, ErrBreakerOpen) && !errors.Is(err, ErrNotRun) {
		l.forget(ctx, p, t)
	}
	switch {
	case err == nil:
		res.set(p.limits, ds)
		if res.Allowed && t.lease != "" {
			res.Lease = l.newLease(p, t, false)
		}
		return nil
	case ctx.Err() != nil:
		// The caller gave up: whatever the store said (a timeout, a
		// cancelled read), it says nothing about the store and must not
		// fail open.
		return callerGone(ctx.Err())
	case errors.Is(err, ErrStoreUnavailable):
		l.degraded(ctx, sc, p, t, err, res)
		return nil
	}
	return errwrap.Wrap("ratelimit: ", "store", err)
}

// callStore runs one call of the store under the timeout and the breaker of the
// keys' shard, appending the decisions to dst. Errors that mean the store
// is unavailable come back wrapping [ErrStoreUnavailable].
func (l *Limiter) callStore(ctx context.Context, dst []Decision, t *takeCall, limits []Limit) ([]Decision, error) {
	s := l.store
	var b *breaker
	if l.breakers != nil {
		if b = l.breakerOf(t.keys[0]); !b.allow() { // the keys of one call share a hash tag
			return dst, ErrBreakerOpen
		}
	}
	tctx, cancel := ctx, context.CancelFunc(func() {})
	if !l.local {
		tctx, cancel = context.WithTimeout(ctx, l.timeout)
	}
	ds, err := takeOrLease(tctx, s, dst, t, limits)
	unavailable := err != nil && (errors.Is(err, ErrStoreUnavailable) || tctx.Err() != nil)
	cancel()
	if b != nil {
		// A caller that gave up says nothing about the store.
		b.done(unavailable && ctx.Err() == nil, ctx.Err() != nil)
	}
	if unavailable && !errors.Is(err, ErrStoreUnavailable) {
		err = fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	if err == nil && !l.local {
		l.replay(ctx, t.keys[0]) // the store answers again: send the releases it could not
	}
	return ds, err
}

// breakerOf returns the breaker of the store shard that holds key (one
// breaker for a store without [Capabilities].Shard); l.breakers is not nil.
func (l *Limiter) breakerOf(key string) *breaker {
	return l.breakers.forShard(l.shardOf(key))
}

// takeOrLease is one Take of s appending to dst, with the lease of t when it
// has one (the limiter checked that s is then a [Leaser]).
func takeOrLease(ctx context.Context, s Store, dst []Decision, t *takeCall, limits []Limit) ([]Decision, error) {
	if t.lease != "" {
		return s.(Leaser).TakeLease(ctx, dst, t.keys, limits, t.cost, t.lease)
	}
	return s.Take(ctx, dst, t.keys, limits, t.cost)
}

// Tier returns the limits of the named tier and whether it exists.
func (l *Limiter) Tier(name string) ([]Limit, bool) {
	p := l.tierSet.Load().plans[name]
	if p == nil {
		return nil, false
	}
	return append([]Limit(nil), p.limits...), true
}

// BreakerState returns the state of the circuit breaker ([BreakerClosed]
// when there is none). With a sharded store ([Capabilities].Shard) it is
// the worst state over the shards: open when any shard's breaker is open.
func (l *Limiter) BreakerState() BreakerState {
	if l.breakers == nil {
		return BreakerClosed
	}
	return l.breakers.current()
}

// plan picks the tier of req: the named one, else the resolver's for its
// TierKey (or Identity), else the default. The error says why a named or
// resolved tier was not used.
func (l *Limiter) plan(ctx context.Context, ts *tierSet, req *Request) (*plan, error) {
	if req.Tier == "" && l.tiers != nil {
		return l.resolved(ctx, ts, req, tierKeyHash(lookupKey(req)))
	}
	return ts.named(req.Tier)
}

// lookupKey is what the resolver looks the tier of req up by.
func lookupKey(req *Request) string {
	if req.TierKey != "" {
		return req.TierKey
	}
	return req.Identity
}

// resolved picks the tier the resolver names for the lookup key of req
// (whose hash is key). When it failed but the last tier it named is kept
// ([WithTierStale]), that tier is used and the error says so. With
// [WithTierKeyIdentity], a key the resolver knows becomes req's Identity.
func (l *Limiter) resolved(ctx context.Context, ts *tierSet, req *Request, key [sha256.Size]byte) (*plan, error) {
	name, err := l.tiers.tier(ctx, key, lookupKey(req))
	if name != "" && l.keyIdent && req.TierKey != "" {
		req.Identity = secrethash.KeyIdentity(req.TierKey)
	}
	if err != nil && name == "" {
		return ts.def, errwrap.Wrap("ratelimit: ", "resolve tier", err)
	}
	p, unknown := ts.named(name)
	if err != nil && unknown == nil {
		return p, errwrap.Wrap("ratelimit: ", "resolve tier", err)
	}
	return p, unknown
}

// named returns the plan of the tier name ("": the default); the error
// says when there is no such tier.
func (ts *tierSet) named(name string) (*plan, error) {
	if name == "" {
		return ts.def, nil
	}
	if p := ts.plans[name]; p != nil {
		return p, nil
	}
	return ts.def, fmt.Errorf("ratelimit: unknown tier %q", name)
}

// degraded decides into res without the primary store, by the failure
// mode.
func (l *Limiter) degraded(ctx context.Context, sc *scratch, p *plan, t *takeCall, cause error, res *Result) {
	if l.failure == FailLocal {
		ds, err := takeOrLease(ctx, l.fallback, sc.ds[:0], t, p.shares)
		sc.ds = ds[:0]
		if err == nil && len(ds) != len(p.shares) {
			err = fmt.Errorf("%d decisions for %d limits", len(ds), len(p.shares))
		}
		if err == nil {
			res.set(p.shares, ds)
			res.Degraded, res.Fallback, res.Err = true, true, cause
			if res.Allowed && t.lease != "" {
				res.Lease = l.newLease(p, t, true)
			}
			return
		}
		cause = fmt.Errorf("%w; fallback: %w", cause, err)
	}
	// Nothing is known about the quota: report it full, and let the
	// failure mode decide (a failed fallback fails open). No lease is
	// held: admitted requests are then not counted in flight.
	allowed := l.failure != FailClosed
	ds := sc.ds[:0]
	for _, lim := range p.limits {
		d := Decision{Limit: lim, Allowed: allowed, Remaining: lim.Capacity()}
		if !allowed {
			d.Reason, d.RetryAfter = Unavailable, unavailableRetry
		}
		ds = append(ds, d)
	}
	sc.ds = ds[:0]
	res.set(p.limits, ds)
	res.Degraded, res.Err = true, cause
}

// unavailableRetry is the Retry-After of a request denied because the
// store could not be asked: long enough not to invite a retry storm, short
// enough to come back soon after the store (the breaker probes every
// 500 ms by default).
const unavailableRetry = time.Second

func (l *Limiter) breakerChanged(from, to BreakerState) {
	for _, o := range l.observers {
		o.BreakerChanged(from, to)
	}
}
