package memstore

import (
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// evalCalendar evaluates a calendar window ([core.CalendarWindow]): a
// fixed window whose bounds are those of [core.Calendar.Window] instead of
// multiples of the period. st.w is the start of the stored window (µs since
// the epoch), st.n its count. As in the fixed window, a reading before the
// stored window is taken as its start (the old window never reopens) and
// the end of the window is measured from the reading.
//
// The window is computed on every take, never remembered with the state:
// a limit renamed onto another unit or zone must see its own windows, as
// it does on Redis, where the app passes the boundaries with each take.
func evalCalendar(o *outcome, st *state, found bool, l core.Limit, now, cost int64) {
	r := l.Rate
	at := now // the key's time: never before the stored window
	if found {
		at = max(now, st.w)
	}
	s, e := l.Calendar.Window(time.UnixMicro(at + epochUnixMicros))
	countWindow(o, st, found, r, epochMicros(s), epochMicros(e)-now, cost)
}
