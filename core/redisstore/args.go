package redisstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// epochUnixMicros is 2024-01-01T00:00:00Z in Unix µs, the epoch of the
// script's clock (docs/algorithms.md, "Units").
const epochUnixMicros = 1704067200 * 1_000_000

// argsPerLimit is how many ARGV values describe one limit in the program
// "take".
const argsPerLimit = 4

// checkTake rejects what would make the script fail or lie: cheap checks
// only, the full validation is [core.Limit.Validate]'s.
func checkTake(keys []string, limits []core.Limit, cost int64, lease string) error {
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
			l.Algorithm == core.CalendarWindow && (l.Calendar.Location == nil || l.Calendar.Unit.Period() == 0) {
			return fmt.Errorf("limit %d is invalid (validate limits with Limit.Validate)", i)
		}
		if l.Algorithm == core.Concurrency && cost > 0 && lease == "" {
			return fmt.Errorf("limit %d (%s) is a Concurrency limit: a take of cost %d needs a lease (TakeLease)", i, l.EffectiveName(), cost)
		}
	}
	return nil
}

// args returns the ARGV of a take of limits (docs/redis-protocol.md). For
// one limit with a program of its own ([hasOwn]), those of its program
// ([Store.oneArgs]). Otherwise those of the program "take": now or "",
// cost, then algorithm, rate, period (µs) and capacity of every limit,
// then the boundaries of the calendar windows, if any, then the lease id
// unless it is "" or no limit is a Concurrency limit.
func (s *Store) args(limits []core.Limit, cost int64, lease string) []any {
	if hasOwn(limits) {
		return s.oneArgs(limits[0], cost)
	}
	args := make([]any, 0, 3+argsPerLimit*len(limits))
	if s.now != nil {
		args = append(args, s.now().UnixMicro()-epochUnixMicros)
	} else {
		args = append(args, "")
	}
	args = append(args, cost)
	calendars := 0
	for _, l := range limits {
		if l.Algorithm == core.CalendarWindow {
			first := 2 + argsPerLimit*len(limits) + calendarArgs*calendars + 1 // ARGV is 1-based
			args = append(args, int64(l.Algorithm), l.Rate, l.Period.Microseconds(), first)
			calendars++
			continue
		}
		args = append(args, int64(l.Algorithm), l.Rate, l.Period.Microseconds(), l.Capacity())
	}
	if calendars > 0 {
		args = s.appendBoundaries(args, limits)
	}
	if lease != "" && leased(limits) {
		args = append(args, lease)
	}
	return args
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

// oneArgs returns the ARGV of a take of the one limit l ([oneLimit]):
// rate, period (µs), then, for the algorithms with a burst, the capacity
// unless it is the rate and the cost is 1, then the cost unless it is 1,
// and now last with a test clock. Every argument is parsed on the server
// on every call: the common take (cost 1, no burst of its own) sends two.
func (s *Store) oneArgs(l core.Limit, cost int64) []any {
	args := make([]any, 0, 5)
	args = append(args, l.Rate, l.Period.Microseconds())
	if oneLimit[l.Algorithm].capacity && (cost != 1 || l.Capacity() != l.Rate) {
		args = append(args, l.Capacity())
	}
	if cost != 1 {
		args = append(args, cost)
	}
	if s.now != nil {
		args = append(args, s.now().UnixMicro()-epochUnixMicros)
	}
	return args
}
