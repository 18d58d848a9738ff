package memstore

import "github.com/ratelimitkit/ratelimit/core"

// An entry is the stored state of one key.
type entry struct {
	alg core.Algorithm
	// expireAt is when the state is back to the default (µs, rounded up
	// to the millisecond as the scripts' PEXPIRE); the entry is absent
	// once now > expireAt.
	expireAt int64
	state
	ext *extState // SlidingLog, Concurrency and lockout entries only
}

// extState is the state of the algorithms that keep more than [state]
// holds, and of lockouts, behind one pointer, so that every entry stays 64
// bytes.
type extState struct {
	log    timeLog   // SlidingLog
	leases leaseSet  // Concurrency
	tombs  leaseSet  // Concurrency: leases released before their take ran, by expiry
	lock   lockState // the lockout entry of a limit ([lockoutEntry])
}

// state is the fixed-size state of GCRA, TokenBucket, FixedWindow,
// SlidingWindow and CalendarWindow, as docs/algorithms.md names it.
type state struct {
	x  float64 // GCRA: tat (µs); TokenBucket: tk (tokens)
	ts int64   // TokenBucket: ts, the time of the last refill (µs); FixedWindow, SlidingWindow: d, the window length (µs)
	w  int64   // FixedWindow, SlidingWindow: the window number (of length d); CalendarWindow: its start (µs)
	n  int64   // FixedWindow, SlidingWindow, CalendarWindow: the count in window w
	p  int64   // SlidingWindow: the count in window w − 1
}

// expired reports whether e is absent at now.
func (e *entry) expired(now int64) bool {
	return now > e.expireAt
}

// evalState runs the algorithm of l for a take of cost at now on the stored
// state st (found is false for a key without state), writing nothing to
// the store. It fills o and, if l admits the take, sets st to the state to
// write. SlidingLog is handled by [evalLog]; a CalendarWindow's windows
// come from windows.
func evalState(o *outcome, st *state, found bool, l *core.Limit, now, cost int64, windows *calendarWindows) {
	switch l.Algorithm {
	case core.TokenBucket:
		evalTokenBucket(o, st, found, l, now, cost)
	case core.FixedWindow:
		evalFixedWindow(o, st, found, l, now, cost)
	case core.SlidingWindow:
		evalSlidingWindow(o, st, found, l, now, cost)
	case core.CalendarWindow:
		evalCalendar(o, st, found, l, now, cost, windows)
	default:
		evalGCRA(o, st, found, l, now, cost)
	}
}
