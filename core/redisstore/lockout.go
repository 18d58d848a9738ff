package redisstore

import (
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// Lockouts on the wire of the program "take" (scripts/take.lua,
// docs/redis-protocol.md): a limit with a [core.Lockout] adds lockoutFlag
// to its algorithm value, has a second key, its lockout key
// ([keylayout.LockoutKey] of its state key), after the state keys of every
// limit, and lockoutArgs values after the calendar boundaries.
const (
	lockoutFlag = 16
	lockoutArgs = 6
)

// lockouts returns how many of limits have a [core.Lockout].
func lockouts(limits []core.Limit) int {
	m := 0
	for i := range limits {
		if limits[i].Lockout.After > 0 {
			m++
		}
	}
	return m
}

// appendLockoutKeys appends to a, the start of an EVALSHA that
// [program.evalSha] built on keys, the lockout key of every limit with a
// Lockout, in the order of limits, and counts them among its keys: the
// script touches them, so a Cluster must see them in KEYS. They share the
// hash tag of the state keys, hence their slot.
func appendLockoutKeys(a []any, keys []string, limits []core.Limit) []any {
	for i := range limits {
		if limits[i].Lockout.After > 0 {
			a = append(a, keylayout.LockoutKey(keys[i]))
		}
	}
	a[2] = len(a) - 3 // "evalsha", the hash, the count, then the keys
	return a
}

// appendLockouts appends the ARGV of the lockout of every limit that has
// one, in order: After, Within (µs), For (µs), Multiplier, Max (µs) and
// Cooldown (µs), with their defaults ([core.Lockout.Effective]), boxed
// once ([boxes]).
func (s *Store) appendLockouts(a []any, limits []core.Limit) []any {
	for i := range limits {
		if limits[i].Lockout.After == 0 {
			continue
		}
		lo := limits[i].Lockout.Effective()
		a = append(a, s.boxes.box(lo.After), s.boxes.box(lo.Within.Microseconds()), s.boxes.box(lo.For.Microseconds()),
			s.boxes.box(lo.Multiplier), s.boxes.box(lo.Max.Microseconds()), s.boxes.box(lo.Cooldown.Microseconds()))
	}
	return a
}
