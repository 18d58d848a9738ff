package redisstore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// calendarArgs is how many boundaries a calendar window sends.
const calendarArgs = 2*core.CalendarSpan + 2

// boundaries are the ARGV of one calendar window: µs since the script's
// epoch. They depend only on the window holding the app's clock, which
// is b[core.CalendarSpan] to b[core.CalendarSpan+1].
type boundaries [calendarArgs]int64

// holds reports whether the list computed for now is still b's.
func (b *boundaries) holds(now int64) bool {
	return b[core.CalendarSpan] <= now && now < b[core.CalendarSpan+1]
}

// calendarCache remembers the boundaries of each calendar, so that a take
// computes them from the zone rules once per window instead of every time
// (a few µs), and boxes them for ARGV once too (six allocations a take
// otherwise: values this large are not among Go's preboxed integers). It
// is safe for concurrent use; the zero value is empty.
type calendarCache struct {
	m sync.Map // core.Calendar -> *atomic.Pointer[calendarEntry]
}

// A calendarEntry is one calendar's boundaries around a window of the
// app's clock, and the same values as ARGV.
type calendarEntry struct {
	b    boundaries
	args [calendarArgs]any
}

// get returns the boundaries of c around now.
func (cc *calendarCache) get(c core.Calendar, now time.Time) *boundaries {
	return &cc.entry(c, now).b
}

// entry returns the cached entry of c around now, computing it when the
// app's clock left the window it was computed for.
func (cc *calendarCache) entry(c core.Calendar, now time.Time) *calendarEntry {
	us := keylayout.EpochMicros(now)
	v, ok := cc.m.Load(c)
	if !ok {
		v, _ = cc.m.LoadOrStore(c, new(atomic.Pointer[calendarEntry]))
	}
	p := v.(*atomic.Pointer[calendarEntry])
	if e := p.Load(); e != nil && e.b.holds(us) {
		return e
	}
	var buf [calendarArgs]time.Time
	e := new(calendarEntry)
	for i, t := range c.Boundaries(buf[:0], now) {
		e.b[i] = keylayout.EpochMicros(t)
		e.args[i] = e.b[i]
	}
	p.Store(e)
	return e
}

// appendBoundaries appends the boundaries of every calendar window of
// limits, computed around the app's clock (docs/algorithms.md, "Calendar
// windows").
func (s *Store) appendBoundaries(args []any, limits []core.Limit) []any {
	now := s.appNow()
	for _, l := range limits {
		if l.Algorithm == core.CalendarWindow {
			args = append(args, s.calendars.entry(l.Calendar, now).args[:]...)
		}
	}
	return args
}
