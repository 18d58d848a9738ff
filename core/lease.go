package core

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
)

// Leaser is implemented by stores that execute [Concurrency] limits:
// core/memstore and core/redisstore. Such a store also states Leases in
// its [Capabilities]. A [Limiter] with a concurrency limit in any tier
// needs one (and a [FailLocal] fallback that is one too). A store wrapping
// another forwards all three methods and states Leases only when what it
// wraps does.
//
// A lease is an id held under the key of a concurrency limit until it is
// released, or until it expires, the limit's Period (lease TTL) after it was
// taken or last renewed, by the store's clock.
type Leaser interface {
	Store
	// TakeLease is [Store.Take] that, when the take is admitted with a
	// cost above zero, leaves lease held under the key of every
	// Concurrency limit among limits (one lease whatever the cost).
	// Denied takes and peeks hold nothing, as Take charges nothing. lease
	// must not be empty; [Limiter] passes 32 random hex digits. Take
	// itself refuses a Concurrency limit with a cost above zero: it
	// would hold a lease nobody can release.
	TakeLease(ctx context.Context, dst []Decision, keys []string, limits []Limit, cost int64, lease string) ([]Decision, error)
	// Release gives lease back under key, a key of the Concurrency limit
	// l. Releasing a lease that is not held (released already, expired,
	// never taken) is no error. A release must never lose a race to the
	// take that adds the lease: a take sent before its caller gave up may
	// run after the release (a pipeline, a stalled server, another
	// connection), so a release of a lease not held leaves a tombstone for
	// l.Period, and a take of a lease id with a tombstone holds nothing.
	Release(ctx context.Context, key string, l Limit, lease string) error
	// Renew pushes the expiry of lease under key, a key of the
	// Concurrency limit l, to l.Period from now, and reports whether the
	// lease was still held; one that expired is not taken again (its
	// place may be another request's by now).
	Renew(ctx context.Context, key string, l Limit, lease string) (bool, error)
}

// ErrLeaseLost is returned by [Limiter.Renew] when a lease had expired
// (or its state was evicted) before it was renewed: the request runs on
// without holding a place, and another request may have taken it.
var ErrLeaseLost = errors.New("ratelimit: lease lost: it expired before it was renewed")

// ConcurrencyRetryAfter caps the RetryAfter of a denying [Concurrency]
// limit. Leases are usually released long before they expire, so the
// stores report the time until the oldest lease expires, but at most this:
// an estimate, not the exact wait of a rate limit. Headers round it up to
// whole seconds (at least 1).
const ConcurrencyRetryAfter = time.Second

// A Lease is what an admitted request holds on the [Concurrency] limits of
// its tier: one id, held under the key of each. [Limiter.Take] puts it in
// [Result.Lease]; give it back with [Limiter.Release] when the request
// ends (the httplimit middleware does it after the handler). A Lease is safe for concurrent use; releasing it twice releases it
// once.
type Lease struct {
	id       string
	keys     []string // of the Concurrency limits, in tier order
	limits   []Limit  // their limits
	store    Leaser   // the store that holds it: the limiter's, or the fallback
	fallback bool     // store is the fallback ([FailLocal])
	released atomic.Bool
}

// ID returns the lease id, as stored (32 hex digits).
func (ls *Lease) ID() string { return ls.id }

// Keys returns the store keys under which the lease is held, one per
// Concurrency limit of the tier.
func (ls *Lease) Keys() []string { return append([]string(nil), ls.keys...) }

// TTL returns the shortest lease TTL (Period) among the Concurrency limits
// that hold the lease: renew it well within that ([Limiter.Renew]).
func (ls *Lease) TTL() time.Duration {
	ttl := ls.limits[0].Period
	for _, l := range ls.limits[1:] {
		ttl = min(ttl, l.Period)
	}
	return ttl
}

// newLeaseID returns 128 random bits as 32 hex digits. They come from
// math/rand/v2's global source, a ChaCha8 generator seeded by the runtime
// from the OS per thread: unique across nodes (two ids collide with
// probability 2⁻¹²⁸, so a fleet would need about 2⁶⁴ leases for even odds),
// lock-free and with no error path, unlike crypto/rand. A lease id is never
// shown to a client, so it needs uniqueness, not secrecy.
func newLeaseID() string {
	var raw [16]byte
	for i := 0; i < 16; i += 8 {
		v := rand.Uint64()
		for j := range 8 {
			raw[i+j] = byte(v >> (8 * j))
		}
	}
	return hex.EncodeToString(raw[:])
}

// newLease returns the lease of take t under plan p, held in the
// limiter's store, or in its fallback. Its keys are built anew: those of t
// may live only for the call ([Capabilities].NonBlocking).
func (l *Limiter) newLease(p *plan, t *takeCall, fallback bool) *Lease {
	store, limits := l.store, p.limits
	if fallback {
		store, limits = l.fallback, p.shares
	}
	ls := &Lease{id: t.lease, store: store.(Leaser), fallback: fallback, limits: make([]Limit, 0, len(p.leased))}
	for _, i := range p.leased {
		ls.keys = append(ls.keys, l.head+t.id+p.suffixes[i])
		ls.limits = append(ls.limits, limits[i])
	}
	return ls
}

// Release gives back the lease of res, the Result of a [Limiter.Take] whose
// request ended (the handler returned, panicked, or the client went away).
// It does nothing for a Result that holds no lease (no Concurrency limit,
// denied, degraded, a peek) or whose lease was released already.
//
// Release works with a ctx that is already cancelled: it runs under
// context.WithoutCancel(ctx) and the limiter's timeout ([WithTimeout]). It
// is sent whatever the circuit breaker says: a skipped release would keep
// the client's place until the lease TTL. When the store cannot answer,
// the release is kept (up to [MaxPendingReleases], until the lease would
// have expired anyway) and sent again by the next calls that reach the
// store, so a short outage does not lock clients out for the TTL. The
// error is reported to the observers that implement [ReleaseObserver] and
// returned, for callers that want it; an HTTP middleware has nothing to do
// with it.
func (l *Limiter) Release(ctx context.Context, res Result) error {
	ls := res.Lease
	if ls == nil || !ls.released.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel := l.leaseContext(context.WithoutCancel(ctx), ls.store)
	defer cancel()
	err := l.releaseAll(ctx, ls.store, ls.keys, ls.limits, ls.id)
	for _, o := range l.observers {
		if ro, ok := o.(ReleaseObserver); ok {
			ro.Released(ctx, res, err)
		}
	}
	return err
}

// releaseAll releases lease under each of keys, keys of limits, and keeps
// the releases the store could not answer for [Limiter.replay].
func (l *Limiter) releaseAll(ctx context.Context, store Leaser, keys []string, limits []Limit, lease string) error {
	var errs []error
	for i, key := range keys {
		err := store.Release(ctx, key, limits[i], lease)
		if err == nil {
			l.replay(ctx, key) // the store answers: send the releases it could not before
			continue
		}
		if errors.Is(err, ErrStoreUnavailable) || ctx.Err() != nil {
			l.pending.add(pendingRelease{store: store, key: key, limit: limits[i], lease: lease,
				until: l.now().Add(limits[i].Period)}) // the lease was taken or renewed before now
		}
		errs = append(errs, errwrap.Wrap("ratelimit: ", "release lease", err))
	}
	return errors.Join(errs...)
}

// Renew pushes the expiry of the lease of res to the lease TTL of each
// Concurrency limit from now, for a request that runs longer than the
// TTL: call it well within every TTL (every [Lease.TTL] / 3, say). It
// returns nil for a Result that holds no lease, [ErrLeaseLost] (wrapped)
// when a lease had expired already, and the store's error when it could
// not be asked. Unlike [Limiter.Release], it runs under ctx (and the
// limiter's timeout). Like Release, it is sent whatever the circuit
// breaker says. The outcome of every renewal of a lease is reported to
// the observers that implement [RenewObserver] (unless the lease was
// released while it ran: then it is moot); when none does, a failed
// renewal is logged (sampled) on slog's default logger.
func (l *Limiter) Renew(ctx context.Context, res Result) error {
	ls := res.Lease
	if ls == nil || ls.released.Load() {
		return nil
	}
	err := l.renew(ctx, ls)
	if !ls.released.Load() { // released meanwhile: whatever the renewal said is moot
		l.renewed(ctx, res, err)
	}
	return err
}

// renew is [Limiter.Renew] of the lease ls, without the observers.
func (l *Limiter) renew(ctx context.Context, ls *Lease) error {
	ctx, cancel := l.leaseContext(ctx, ls.store)
	defer cancel()
	var errs []error
	for i, key := range ls.keys {
		held, err := ls.store.Renew(ctx, key, ls.limits[i], ls.id)
		if err == nil && !held {
			err = fmt.Errorf("%w (limit %q)", ErrLeaseLost, ls.limits[i].Name)
		}
		if err != nil {
			errs = append(errs, errwrap.Wrap("ratelimit: ", "renew lease", err))
		}
	}
	return errors.Join(errs...)
}

// forget releases the lease of a take that failed after it may have been
// sent (a reply lost to a timeout or to a caller that gave up), so that it
// does not hold a place until its TTL. The take may run after the release
// (it may still be in a pipeline, or queued on a stalled server): the
// store's tombstone then keeps it from holding the lease ([Leaser]). A
// release the store cannot answer is kept for [Limiter.replay].
func (l *Limiter) forget(ctx context.Context, p *plan, t *takeCall) {
	ls := l.newLease(p, t, false)
	ctx, cancel := l.leaseContext(context.WithoutCancel(ctx), ls.store)
	defer cancel()
	_ = l.releaseAll(ctx, ls.store, ls.keys, ls.limits, ls.id)
}

// leaseContext returns ctx under the limiter's timeout, unless store never
// blocks.
func (l *Limiter) leaseContext(ctx context.Context, store Leaser) (context.Context, context.CancelFunc) {
	if CapabilitiesOf(store).NonBlocking {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, l.timeout)
}

// A ReleaseObserver is an [Observer] that also hears about every
// [Limiter.Release] of a lease: err is nil when the store gave the lease
// back, else why not (the lease then expires after its TTL). Like
// Decided, Released runs on the request path: it must be fast and must
// not block.
type ReleaseObserver interface {
	Observer
	// Released is called once per lease given to Release, whether the
	// store gave it back (err == nil) or not; never for a Result without
	// a lease, nor for a lease released already.
	Released(ctx context.Context, res Result, err error)
}
