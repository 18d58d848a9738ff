package redisstore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
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
// (a few µs). It is safe for concurrent use; the zero value is empty.
type calendarCache struct {
	m sync.Map // core.Calendar -> *atomic.Pointer[boundaries]
}

// get returns the boundaries of c around now.
func (cc *calendarCache) get(c core.Calendar, now time.Time) *boundaries {
	us := now.UnixMicro() - epochUnixMicros
	v, ok := cc.m.Load(c)
	if !ok {
		v, _ = cc.m.LoadOrStore(c, new(atomic.Pointer[boundaries]))
	}
	p := v.(*atomic.Pointer[boundaries])
	if b := p.Load(); b != nil && b.holds(us) {
		return b
	}
	var buf [calendarArgs]time.Time
	b := new(boundaries)
	for i, t := range c.Boundaries(buf[:0], now) {
		b[i] = t.UnixMicro() - epochUnixMicros
	}
	p.Store(b)
	return b
}

// appendBoundaries appends the boundaries of every calendar window of
// limits, computed around the app's clock (docs/algorithms.md, "Calendar
// windows").
func (s *Store) appendBoundaries(args []any, limits []core.Limit) []any {
	now := s.appNow()
	for _, l := range limits {
		if l.Algorithm != core.CalendarWindow {
			continue
		}
		for _, b := range s.calendars.get(l.Calendar, now) {
			args = append(args, b)
		}
	}
	return args
}
