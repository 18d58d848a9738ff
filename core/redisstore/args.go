package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// argsPerLimit is how many ARGV values describe one limit in the program
// "take".
const argsPerLimit = 4

// maxOneArgs is how many ARGV values a take of one limit with a program of
// its own sends at most ([Store.appendOneArgs]).
const maxOneArgs = 5

// validateTake rejects what would make the script fail or lie: cheap checks
// only, the full validation is [core.Limit.Validate]'s.
func validateTake(keys []string, limits []core.Limit, cost int64, lease string) error {
	switch {
	case len(limits) == 0:
		return errors.New("no limits")
	case len(keys) != len(limits):
		return fmt.Errorf("%d keys for %d limits", len(keys), len(limits))
	case cost < 0:
		return fmt.Errorf("negative cost %d", cost)
	}
	for i, l := range limits {
		if l.Rate <= 0 || l.Period < time.Microsecond || l.Capacity() <= 0 || l.Algorithm.Tag() == "?" ||
			l.Algorithm == core.CalendarWindow && (l.Calendar.Location == nil || l.Calendar.Unit.Period() == 0) ||
			l.Lockout.After != 0 && (l.Lockout.After < 0 || l.Lockout.Within < time.Microsecond ||
				l.Lockout.For < time.Microsecond || l.Algorithm == core.Concurrency) {
			return fmt.Errorf("limit %d is invalid (validate limits with Limit.Validate)", i)
		}
		if l.Algorithm == core.Concurrency && cost > 0 && lease == "" {
			return fmt.Errorf("limit %d (%s) is a Concurrency limit: a take of cost %d needs a lease (TakeLease)", i, l.EffectiveName(), cost)
		}
	}
	return nil
}

// call returns the program of a take of limits and its EVALSHA: keys (and
// the lockout keys of the limits with a Lockout, [appendLockoutKeys]),
// then the ARGV of [Store.appendArgs].
func (s *Store) call(ctx context.Context, keys []string, limits []core.Limit, cost int64, lease string) (*program, *redis.IntSliceCmd) {
	p := s.progs.choose(limits)
	if hasOwn(limits) {
		return p, newCall(ctx, s.appendOneArgs(p.evalSha(keys, maxOneArgs), limits[0], cost))
	}
	m := lockouts(limits)
	// The lockout keys, now, cost, the limits, their lockouts, a lease;
	// calendars grow it.
	a := p.evalSha(keys, m+3+argsPerLimit*len(limits)+lockoutArgs*m)
	if m > 0 {
		a = appendLockoutKeys(a, keys, limits)
	}
	return p, newCall(ctx, s.appendArgs(a, limits, cost, lease))
}

// appendArgs appends the ARGV of a take of limits to a
// (docs/redis-protocol.md). For one limit with a program of its own
// ([hasOwn]), those of its program ([Store.appendOneArgs]). Otherwise
// those of the program "take": now or "", cost, then algorithm (plus 16
// with a Lockout), rate, period (µs) and capacity of every limit (boxed
// once, [boxes]), then the boundaries of the calendar windows, if any, then
// the values of the lockouts, if any ([Store.appendLockouts]), then the
// lease id unless it is "" or no limit is a Concurrency limit.
func (s *Store) appendArgs(a []any, limits []core.Limit, cost int64, lease string) []any {
	if hasOwn(limits) {
		return s.appendOneArgs(a, limits[0], cost)
	}
	if s.now != nil {
		a = append(a, keylayout.EpochMicros(s.now()))
	} else {
		a = append(a, "")
	}
	a = append(a, cost)
	calendars, locks := 0, 0
	for _, l := range limits {
		alg := int64(l.Algorithm)
		if l.Lockout.After > 0 {
			alg += lockoutFlag
			locks++
		}
		if l.Algorithm == core.CalendarWindow {
			first := 2 + argsPerLimit*len(limits) + calendarArgs*calendars + 1 // ARGV is 1-based
			a = append(a, alg, s.boxes.box(l.Rate), s.boxes.box(l.Period.Microseconds()), first)
			calendars++
			continue
		}
		a = append(a, alg, s.boxes.box(l.Rate), s.boxes.box(l.Period.Microseconds()), s.boxes.box(l.Capacity()))
	}
	if calendars > 0 {
		a = s.appendBoundaries(a, limits)
	}
	if locks > 0 {
		a = s.appendLockouts(a, limits)
	}
	if lease != "" && leased(limits) {
		a = append(a, lease)
	}
	return a
}

// leased reports whether a Concurrency limit is among limits: only then
// does the script take a lease id.
func leased(limits []core.Limit) bool {
	for _, l := range limits {
		if l.Algorithm == core.Concurrency {
			return true
		}
	}
	return false
}

// appendOneArgs appends the ARGV of a take of the one limit l
// ([oneLimit]) to a: rate, period (µs), then, for the algorithms with a
// burst, the capacity unless it is the rate and the cost is 1 (the limit's
// values boxed once, [boxes]), then the cost unless it is 1, and now last
// with a test clock. Every argument is parsed on the server on every
// call: the common take (cost 1, no burst of its own) sends two.
func (s *Store) appendOneArgs(a []any, l core.Limit, cost int64) []any {
	a = append(a, s.boxes.box(l.Rate), s.boxes.box(l.Period.Microseconds()))
	if oneLimit[l.Algorithm].capacity && (cost != 1 || l.Capacity() != l.Rate) {
		a = append(a, s.boxes.box(l.Capacity()))
	}
	if cost != 1 {
		a = append(a, cost)
	}
	if s.now != nil {
		a = append(a, keylayout.EpochMicros(s.now()))
	}
	return a
}
