package pgstore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// calendarArgs is how many boundaries a calendar window sends.
const calendarArgs = 2*core.CalendarSpan + 2

// boundaries are the window boundaries of one calendar around the app's
// clock, µs since the epoch; the window holding the app's clock is
// b[core.CalendarSpan] to b[core.CalendarSpan+1].
type boundaries [calendarArgs]int64

// calendarCache remembers the boundaries of each calendar, so that a take
// computes them from the zone rules once per window rather than every
// time. It is safe for concurrent use; the zero value is empty.
type calendarCache struct {
	m sync.Map // core.Calendar -> *atomic.Pointer[boundaries]
}

// get returns the boundaries of c around now.
func (cc *calendarCache) get(c core.Calendar, now time.Time) *boundaries {
	us := keylayout.EpochMicros(now)
	v, ok := cc.m.Load(c)
	if !ok {
		v, _ = cc.m.LoadOrStore(c, new(atomic.Pointer[boundaries]))
	}
	p := v.(*atomic.Pointer[boundaries])
	if b := p.Load(); b != nil && b[core.CalendarSpan] <= us && us < b[core.CalendarSpan+1] {
		return b
	}
	var buf [calendarArgs]time.Time
	b := new(boundaries)
	for i, t := range c.Boundaries(buf[:0], now) {
		b[i] = keylayout.EpochMicros(t)
	}
	p.Store(b)
	return b
}
