package memstore

import (
	"sync"
	"sync/atomic"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// evalCalendar evaluates a calendar window ([core.CalendarWindow]): a
// fixed window whose bounds are those of [core.Calendar.Window] instead of
// multiples of the period. st.w is the start of the stored window (µs since
// the epoch), st.n its count. As in the fixed window, a reading before the
// stored window is taken as its start (the old window never reopens) and
// the end of the window is measured from the reading.
//
// The window comes from the calendar's own rules at every take (through
// windows, which remembers the last one), never from the state: a limit
// renamed onto another unit or zone must see its own windows, as it does
// on Redis, where the app passes the boundaries with each take.
func evalCalendar(o *outcome, st *state, found bool, l *core.Limit, now, cost int64, windows *calendarWindows) {
	r := l.Rate
	at := now // the key's time: never before the stored window
	if found {
		at = max(now, st.w)
	}
	start, end := windows.window(l.Calendar, at)
	countWindow(o, st, found, r, start, end-now, cost)
}

// calendarWindows remembers the window each calendar was last asked for,
// so that a take computes it from the zone rules once per window (about
// 150 ns a take otherwise) rather than every time. It is safe for
// concurrent use; the zero value is empty.
type calendarWindows struct {
	m sync.Map // core.Calendar -> *atomic.Pointer[calendarWindow]
}

// A calendarWindow is one window of a calendar, µs since the epoch.
type calendarWindow struct{ start, end int64 }

// window returns the window of c holding at (µs since the epoch).
func (cw *calendarWindows) window(c core.Calendar, at int64) (start, end int64) {
	v, ok := cw.m.Load(c)
	if !ok {
		v, _ = cw.m.LoadOrStore(c, new(atomic.Pointer[calendarWindow]))
	}
	p := v.(*atomic.Pointer[calendarWindow])
	if w := p.Load(); w != nil && w.start <= at && at < w.end {
		return w.start, w.end
	}
	s, e := c.Window(keylayout.FromEpochMicros(at))
	w := &calendarWindow{keylayout.EpochMicros(s), keylayout.EpochMicros(e)}
	p.Store(w)
	return w.start, w.end
}
