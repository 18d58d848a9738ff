package memstore

import (
	"math"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// lockoutEntry is the alg of an entry that holds the lockout state of a
// limit ([core.Lockout]) under its lockout key ([keylayout.LockoutKey]):
// no algorithm's, so no take ever reads it as a limit's state.
const lockoutEntry = core.Algorithm(255)

// never is a time of a lockState that is none, as a field absent from the
// Redis hash: before every instant, so that "w ≤ now" (the window is over),
// "u > now" (locked out) and "c > now" (in the cool-down) read right for
// every now, before 2024 too, where times are negative.
const never = math.MinInt64

// lockState is the lockout state of one client and limit, as the Redis
// hash of the lockout key holds it (scripts/lockout.lua): times in µs
// since the epoch, never when none.
type lockState struct {
	v int64 // denials counted in the window ending at w
	w int64 // the end of the counting window; never: none open
	n int64 // the level of the last lockout: 1 for the first in a row
	u int64 // locked out until u; never: no lockout yet
	c int64 // the cool-down ends at c: a lockout before it is one more in a row
}

// noLock is the state of a client and limit without any.
var noLock = lockState{w: never, u: never, c: never}

// count counts a denial at now under lo, whose zero fields have their
// defaults ([core.Lockout.Effective]). It returns the length in µs of the
// lockout the denial starts, or 0 when it starts none.
func (st *lockState) count(lo core.Lockout, now int64) int64 {
	if st.w <= now {
		st.v, st.w = 0, now+lo.Within.Microseconds()
	}
	if st.v++; st.v < lo.After {
		return 0
	}
	if st.c > now {
		st.n++
	} else {
		st.n = 1
	}
	d := lo.Duration(st.n).Microseconds()
	st.u, st.c = now+d, now+d+lo.Cooldown.Microseconds()
	st.v, st.w = 0, never // the count starts again
	return d
}

// ttl returns how long the state must be kept after now: until the
// counting window and the cool-down have both ended.
func (st *lockState) ttl(now int64) int64 {
	return max(st.w, st.c) - now
}

// hasLockout reports whether a limit of limits has a [core.Lockout].
func hasLockout(limits []core.Limit) bool {
	for i := range limits {
		if limits[i].Lockout.After > 0 {
			return true
		}
	}
	return false
}

// maxKeyOnStack is how long a state key may be for its lockout key to be
// built on the stack; longer ones (a prefix of 64 bytes and a hashed
// identity make about 130) are built on the heap.
const maxKeyOnStack = 160

// lockOf returns the live lockout state of the limit whose state key is
// key, in the shard sh (the lockout key shares key's hash tag, hence its
// shard, which the take holds), or noLock.
func (sh *shard) lockOf(key string, now int64) lockState {
	var buf [maxKeyOnStack]byte
	e := sh.lookup(string(keylayout.AppendLockoutKey(buf[:0], key)), now)
	if e == nil || e.alg != lockoutEntry || e.ext == nil {
		return noLock
	}
	return e.ext.lock
}

// setLock stores st as the lockout state of the limit whose state key is
// key, to expire when [lockState.ttl] says, as the Redis program's
// PEXPIRE. held are the slots of the take in progress, which a full shard
// evicts last.
func (sh *shard) setLock(key string, st lockState, now int64, held []slot) {
	var buf [maxKeyOnStack]byte
	lk := keylayout.AppendLockoutKey(buf[:0], key)
	e := sh.entries[string(lk)]
	if e == nil {
		e = sh.insert(string(lk), now, held)
	}
	if e.alg != lockoutEntry || e.ext == nil {
		e.ext = &extState{}
	}
	e.alg, e.ext.lock, e.expireAt = lockoutEntry, st, now+ttlMicros(st.ttl(now))
}

// takeLockoutSlots is takeLockout with zeroed slots, on the stack for up
// to maxInline limits.
func (s *Store) takeLockoutSlots(dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) []core.Decision {
	if len(keys) > maxInline {
		return s.takeLockout(dst, keys, limits, cost, lease, make([]slot, len(keys)))
	}
	var buf [maxInline]slot
	return s.takeLockout(dst, keys, limits, cost, lease, buf[:len(keys)])
}

// takeLockout is [Store.take] of limits of which at least one has a
// [core.Lockout], as the Redis program "take" runs them
// (scripts/take.lua, scripts/lockout.lua): a client locked out by any of
// them is denied, its other limits peeked; otherwise the limits decide as
// ever, and a denial that a limit with a Lockout gave for want of quota is
// counted, which may lock the client out at once.
func (s *Store) takeLockout(dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string, slots []slot) []core.Decision {
	s.shardsOf(keys, slots)
	now := s.clock()
	var lockBuf [maxInline]int
	locked := s.lock(lockBuf[:0], slots)
	var untilBuf [maxInline]int64
	until, lockedOut := s.lockedUntil(untilBuf[:0], slots, keys, limits, now)
	admitted := false
	if lockedOut {
		s.peek(slots, keys, limits, now) // a client locked out is charged and counted nothing
	} else {
		admitted = s.decideLockout(slots, keys, limits, now, cost, lease, until)
	}
	s.unlock(locked)

	for i := range slots {
		dst = slots[i].out.appendDecision(dst, &limits[i], admitted)
		if until[i] != never {
			lockedOutDecision(&dst[len(dst)-1], until[i]-now)
		}
	}
	return dst
}

// lockedUntil appends to dst, per limit, the end of the lockout in force
// of its client at now, or never when none is, and reports whether any
// is. The take holds the shards of the keys, and so of their lockout keys.
func (s *Store) lockedUntil(dst []int64, slots []slot, keys []string, limits []core.Limit, now int64) ([]int64, bool) {
	found := false
	for i := range slots {
		u := int64(never)
		if limits[i].Lockout.After > 0 {
			u = s.shards[slots[i].shard].lockOf(keys[i], now).u
		}
		if u <= now {
			u = never
		}
		dst, found = append(dst, u), found || u != never
	}
	return dst, found
}

// peek evaluates every limit for a take of cost 0, writing nothing, and
// drops the expired entries, as a peek's take does.
func (s *Store) peek(slots []slot, keys []string, limits []core.Limit, now int64) {
	for i := range slots {
		s.evaluate(&slots[i], keys[i], &limits[i], now, 0)
	}
	s.dropStale(slots, keys)
}

// decideLockout evaluates and charges the limits of a take of a client
// not locked out, as [Store.take] does, and counts the denial of each
// limit with a Lockout that denied for want of quota; when one starts a
// lockout, it sets until[i] to its end. It reports whether the take was
// admitted.
func (s *Store) decideLockout(slots []slot, keys []string, limits []core.Limit, now, cost int64, lease string, until []int64) bool {
	admitted := true
	for i := range slots {
		admitted = s.evaluate(&slots[i], keys[i], &limits[i], now, cost) && admitted
	}
	if admitted && cost > 0 {
		for i := range slots {
			s.commit(slots, i, keys[i], &limits[i], now, cost, lease)
		}
		return true
	}
	s.dropStale(slots, keys)
	for i := range slots {
		if limits[i].Lockout.After == 0 || cost == 0 || slots[i].out.reason != core.Exhausted {
			continue
		}
		sh := &s.shards[slots[i].shard]
		st := sh.lockOf(keys[i], now)
		if d := st.count(limits[i].Lockout.Effective(), now); d > 0 {
			until[i] = now + d
		}
		sh.setLock(keys[i], st, now, slots)
	}
	return admitted
}

// lockedOutDecision makes d the decision of a limit whose lockout ends
// retry µs from now: denied, LockedOut, nothing remaining, and full again
// no sooner than the lockout ends.
func lockedOutDecision(d *core.Decision, retry int64) {
	d.Allowed, d.Reason, d.Remaining = false, core.LockedOut, 0
	d.RetryAfter = micros(retry)
	d.ResetAfter = max(d.ResetAfter, d.RetryAfter)
}
