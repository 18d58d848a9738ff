package memstore

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// A Store is an in-memory [core.Store]. Make one with [New]; the zero
// value is not usable. It is safe for concurrent use and needs no Close:
// it starts no goroutine, and expired keys are removed when touched or
// when their shard needs room.
//
// Time is read from the clock of [WithClock] in microseconds since
// 2024-01-01T00:00:00Z, once per take, and may be any instant, before 2024
// too. A reading earlier than a key's state (a wall clock stepped back, or
// two takes that read the clock in one order and lock in the other) admits
// no more than the limits allow: each algorithm keeps its key's own time,
// exactly as the Redis scripts do (docs/algorithms.md, "A clock that goes
// back brings no quota back"), so the two stores give the same decisions.
type Store struct {
	shards []shard
	mask   uint64
	seed   maphash.Seed
	now    func() time.Time // the clock of WithClock, or nil
	start  time.Time        // the default clock: the wall clock at New...
	base   int64            // ...in µs since the epoch

	windows  calendarWindows // the last window of each calendar
	controls controls        // core.ControlStore: control records, per space
}

// New returns a [Store] configured by opts, or an error naming the option
// that is invalid.
func New(opts ...Option) (*Store, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	s := &Store{
		shards: make([]shard, c.shards),
		mask:   uint64(c.shards - 1),
		seed:   maphash.MakeSeed(),
		now:    c.clock,
		start:  time.Now(),
	}
	s.base = keylayout.EpochMicros(s.start)
	for i := range s.shards {
		// Shares of maxKeys that add up to exactly maxKeys.
		s.shards[i].maxKeys = c.maxKeys / c.shards
		if i < c.maxKeys%c.shards {
			s.shards[i].maxKeys++
		}
		s.shards[i].entries = make(map[string]*entry)
	}
	return s, nil
}

// clock returns the time in µs since the epoch: the reading of the clock of
// [WithClock], or else the wall clock at [New] advanced by the monotonic
// clock, which costs one read of the monotonic clock and no call through a
// func value.
func (s *Store) clock() int64 {
	if s.now != nil {
		return keylayout.EpochMicros(s.now())
	}
	return s.base + time.Since(s.start).Microseconds()
}

// Clock returns the clock of [WithClock], or nil. [Store.Capabilities]
// states it, so a [core.Limiter] over the store times its deny cache, tier
// cache and breaker with the same clock as the store's limits.
func (s *Store) Clock() func() time.Time { return s.now }

// Capabilities implements [core.Capable]: a take never waits on I/O
// (NonBlocking, so a [core.Limiter] gives it no deadline), the store holds
// leases ([core.Leaser]), and its Clock is that of [WithClock].
func (s *Store) Capabilities() core.Capabilities {
	return core.Capabilities{NonBlocking: true, Clock: s.now, Leases: true, Lockouts: true}
}

// A slot is the work on one limit of a take.
type slot struct {
	shard int
	e     *entry // nil when the key has no entry
	stale bool   // e has expired: the key has no state, and a write reuses e
	out   outcome
	next  state // the stored state, then the one to write if admitted
}

// maxInline is how many limits a take handles without allocating.
const maxInline = 8

// Take implements [core.Store]: it evaluates every limit, charges cost to
// all of them only if all admit it, and appends one [core.Decision] per
// limit to dst. It allocates nothing for keys that already have state when
// dst has room and there are at most 8 limits.
//
// A [core.Concurrency] limit needs [Store.TakeLease] for a cost above zero.
func (s *Store) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	return s.takeChecked(ctx, dst, keys, limits, cost, "")
}

// takeChecked is Take and TakeLease: lease is "" for Take.
func (s *Store) takeChecked(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	if err := validateTake(ctx, keys, limits, cost, lease); err != nil {
		return dst, err
	}
	// The slots live on the stack. A one-limit take, the common case, has
	// its own path with one slot: zeroing eight slots (over a kilobyte) on
	// every take is a measurable part of its cost.
	// A take with a Lockout has its own path, so that those without one
	// pay one test per limit for it.
	switch {
	case len(keys) == 1 && limits[0].Lockout.After == 0:
		return s.takeOne(dst, keys[0], &limits[0], cost, lease), nil
	case hasLockout(limits):
		return s.takeLockoutSlots(dst, keys, limits, cost, lease), nil
	case len(keys) <= maxInline:
		var buf [maxInline]slot
		return s.take(dst, keys, limits, cost, lease, buf[:len(keys)]), nil
	}
	return s.take(dst, keys, limits, cost, lease, make([]slot, len(keys))), nil
}

// take is [Store.Take] on valid arguments, with one zeroed slot per key.
func (s *Store) take(dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string, slots []slot) []core.Decision {
	s.shardsOf(keys, slots)
	now := s.clock() // read outside the lock: every key keeps its own time
	var lockBuf [maxInline]int
	locked := s.lock(lockBuf[:0], slots)

	admitted := true
	for i := range slots {
		admitted = s.evaluate(&slots[i], keys[i], &limits[i], now, cost) && admitted
	}
	if admitted && cost > 0 {
		for i := range slots {
			s.commit(slots, i, keys[i], &limits[i], now, cost, lease)
		}
	} else {
		s.dropStale(slots, keys)
	}
	s.unlock(locked)

	for i := range slots {
		dst = slots[i].out.appendDecision(dst, &limits[i], admitted)
	}
	return dst
}

// takeOne is [Store.take] of one limit, step for step, without the loops
// over slots, the search for shared tags and the sort of the locks.
func (s *Store) takeOne(dst []core.Decision, key string, l *core.Limit, cost int64, lease string) []core.Decision {
	var one [1]slot
	sl := &one[0]
	sl.shard = s.shardOf(key)
	now := s.clock() // read outside the lock, as in take
	sh := &s.shards[sl.shard]
	sh.mu.Lock()
	admitted := s.evaluate(sl, key, l, now, cost)
	if admitted && cost > 0 {
		s.commit(one[:], 0, key, l, now, cost, lease)
	} else if sl.stale {
		delete(sh.entries, key) // as dropStale
	}
	sh.mu.Unlock()
	return sl.out.appendDecision(dst, l, admitted)
}

// evaluate fills sl with the outcome of limit l on key, writing nothing
// (the sliding log prunes, which changes no decision). It reports whether
// the limit admits the take.
func (s *Store) evaluate(sl *slot, key string, l *core.Limit, now, cost int64) bool {
	sl.e = s.shards[sl.shard].entries[key]
	sl.stale = sl.e != nil && sl.e.expired(now)
	found := sl.e != nil && !sl.stale && sl.e.alg == l.Algorithm
	switch l.Algorithm {
	case core.SlidingLog:
		var lg *timeLog
		if found && sl.e.ext != nil {
			lg = &sl.e.ext.log
		}
		evalLog(&sl.out, lg, l, now, cost)
		return sl.out.allowed
	case core.Concurrency:
		var x *extState
		if found {
			x = sl.e.ext
		}
		evalLeases(&sl.out, x, l, now, cost)
		return sl.out.allowed
	}
	if found {
		sl.next = sl.e.state
	}
	evalState(&sl.out, &sl.next, found, l, now, cost, &s.windows)
	return sl.out.allowed
}

// commit writes the state of slots[i], creating its entry if needed. An
// expired entry is reused as it is, key and memory: a client whose state
// ran out between two requests (a quota far from exhausted lives only
// microseconds) costs no allocation.
func (s *Store) commit(slots []slot, i int, key string, l *core.Limit, now, cost int64, lease string) {
	sl, alg := &slots[i], l.Algorithm
	if sl.e == nil {
		sl.e = s.shards[sl.shard].insert(key, now, slots)
	}
	e := sl.e
	if sl.stale && e.ext != nil {
		// Every unit left the window, and every lease expired, when the
		// entry expired.
		e.ext.log.reset()
		clear(e.ext.leases)
		clear(e.ext.tombs)
	}
	switch alg {
	case core.SlidingLog:
		if e.alg != alg || e.ext == nil {
			e.ext = &extState{}
		}
		e.ext.log.add(e.ext.log.clock(now), cost)
	case core.Concurrency:
		commitLease(e, lease, now, periodMicros(l.Period))
	default:
		e.state, e.ext = sl.next, nil
	}
	e.alg, e.expireAt = alg, now+sl.out.ttl
}

// dropStale removes the expired entries of a take that writes nothing, so
// a key is absent once it expired and was touched.
func (s *Store) dropStale(slots []slot, keys []string) {
	for i := range slots {
		if slots[i].stale {
			delete(s.shards[slots[i].shard].entries, keys[i])
		}
	}
}

// shardOf returns the index of the shard of key, chosen by its hash tag.
func (s *Store) shardOf(key string) int {
	return int(maphash.String(s.seed, hashTag(key)) & s.mask)
}

// shardsOf sets the shard of every slot. The keys of one take share the
// hash tag of one client (core.Store's contract): a key that starts like
// the first one up to its tag's closing '}' has that tag, and its shard,
// without looking for the tag and hashing it again. Any other key is
// hashed on its own.
func (s *Store) shardsOf(keys []string, slots []slot) {
	first := keys[0]
	start, end := keylayout.TagBounds(first)
	shard := int(maphash.String(s.seed, first[start:end]) & s.mask)
	slots[0].shard = shard
	for i := 1; i < len(keys); i++ {
		if k := keys[i]; start > 0 && len(k) > end && k[:end+1] == first[:end+1] {
			slots[i].shard = shard
		} else {
			slots[i].shard = s.shardOf(k)
		}
	}
}

// lock locks the distinct shards of slots in increasing order (so takes
// that cross shards cannot deadlock) and returns their indices, appended
// to buf.
func (s *Store) lock(buf []int, slots []slot) []int {
	if len(slots) == 1 { // the common case: nothing to sort
		buf = append(buf, slots[0].shard)
		s.shards[slots[0].shard].mu.Lock()
		return buf
	}
	for i := range slots {
		if !slices.Contains(buf, slots[i].shard) {
			buf = append(buf, slots[i].shard)
		}
	}
	if len(buf) > 1 {
		slices.Sort(buf)
	}
	for _, i := range buf {
		s.shards[i].mu.Lock()
	}
	return buf
}

func (s *Store) unlock(locked []int) {
	for _, i := range locked {
		s.shards[i].mu.Unlock()
	}
}

// Len returns the number of stored keys, counting expired ones that were
// not removed yet. It is meant for tests and metrics.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

// validateTake rejects the arguments that [core.Store] rules out, so a
// caller's mistake is an error instead of a panic or nonsense.
func validateTake(ctx context.Context, keys []string, limits []core.Limit, cost int64, lease string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ratelimit: memstore: %w", err)
	}
	if len(keys) == 0 || len(keys) != len(limits) {
		return fmt.Errorf("ratelimit: memstore: take needs one key per limit, got %d keys and %d limits", len(keys), len(limits))
	}
	if cost < 0 {
		return fmt.Errorf("ratelimit: memstore: cost must not be negative, got %d", cost)
	}
	for i := range limits {
		l := &limits[i] // a Limit is 64 bytes: not copied per check
		if l.Rate <= 0 || l.Burst < 0 || l.Period < time.Microsecond || l.Algorithm > core.Concurrency ||
			l.Algorithm == core.CalendarWindow && (l.Calendar.Location == nil || l.Calendar.Unit.Period() == 0) ||
			l.Lockout.After != 0 && (l.Lockout.After < 0 || l.Lockout.Within < time.Microsecond ||
				l.Lockout.For < time.Microsecond || l.Algorithm == core.Concurrency) {
			return l.Validate() // names the limit and the field
		}
		if l.Algorithm == core.Concurrency && cost > 0 && lease == "" {
			return fmt.Errorf("ratelimit: memstore: limit %q is a Concurrency limit: a take of cost %d needs a lease (TakeLease)", l.EffectiveName(), cost)
		}
	}
	return nil
}
