package core

import (
	"fmt"
	"time"
)

// A CalendarUnit is the length of a calendar window: a local day, an ISO
// week or a month. The zero value, [NotCalendar], belongs to the limits that
// do not count in calendar windows.
type CalendarUnit uint8

const (
	// NotCalendar marks a limit that is not a calendar quota.
	NotCalendar CalendarUnit = iota
	// CalendarDay windows start at local midnight; a day lasts 23, 24 or
	// 25 hours (or another length where a zone changes its offset by
	// another amount).
	CalendarDay
	// CalendarWeek windows start at local midnight on Mondays (ISO 8601
	// weeks).
	CalendarWeek
	// CalendarMonth windows start at local midnight on the 1st: 28 to 31
	// days, give or take a DST change.
	CalendarMonth

	numCalendarUnits
)

var calendarUnitNames = [numCalendarUnits]string{"", "day", "week", "month"}

// Nominal periods of the calendar units: the Period of a calendar limit,
// the "w" of its RateLimit-Policy item. A month is nominally 30 days.
const (
	calendarDayPeriod   = 24 * time.Hour
	calendarWeekPeriod  = 7 * calendarDayPeriod
	calendarMonthPeriod = 30 * calendarDayPeriod
)

// String returns "day", "week" or "month" ("" for [NotCalendar]).
func (u CalendarUnit) String() string {
	if u >= numCalendarUnits {
		return fmt.Sprintf("CalendarUnit(%d)", uint8(u))
	}
	return calendarUnitNames[u]
}

// Period returns the nominal length of the unit: 24 hours, 7 days or 30
// days; 0 for [NotCalendar]. A calendar limit's Period must be it: the
// RateLimit-Policy header reports it as the window ("w"), while ResetAfter
// and RetryAfter, hence the RateLimit header's "t", count to the real end
// of the window.
func (u CalendarUnit) Period() time.Duration {
	switch u {
	case CalendarDay:
		return calendarDayPeriod
	case CalendarWeek:
		return calendarWeekPeriod
	case CalendarMonth:
		return calendarMonthPeriod
	}
	return 0
}

// A Calendar is the window of a calendar quota: the unit, and the time
// zone whose local midnight starts a window. The zero value is no
// calendar. Its methods compute the windows with the rules of Go's time
// zone database (they are pure functions of their arguments); the stores
// use them to count a [CalendarWindow] limit.
type Calendar struct {
	// Unit is the window's length: [CalendarDay], [CalendarWeek] or
	// [CalendarMonth].
	Unit CalendarUnit
	// Location is the time zone of the windows, as time.LoadLocation
	// returns it, or time.UTC. time.Local is refused: its rules depend on
	// each node's TZ setting, and nodes that disagree would disagree on
	// the boundaries.
	Location *time.Location
}

// CalendarSpan is how many windows [Calendar.Boundaries] lists on each
// side of the window holding the app's clock. Two windows cover a server
// clock up to 46 hours (two 23-hour days), 14 days or 59 days ahead of or
// behind the app's clock, for a day, week or month quota; less for a day
// quota only next to a date a zone skipped (Samoa's 30 December 2011).
const CalendarSpan = 2

// calendarBoundaries is the length of the list of [Calendar.Boundaries].
const calendarBoundaries = 2*CalendarSpan + 2

// date is a civil date; time.Date normalises it (day 0 is the last day of
// the previous month).
type date struct {
	y int
	m time.Month
	d int
}

func dateOf(t time.Time) date {
	y, m, d := t.Date()
	return date{y, m, d}
}

// before reports whether a is an earlier date than b.
func (a date) before(b date) bool {
	if a.y != b.y {
		return a.y < b.y
	}
	if a.m != b.m {
		return a.m < b.m
	}
	return a.d < b.d
}

// norm returns a with its fields in range.
func (a date) norm() date {
	return dateOf(time.Date(a.y, a.m, a.d, 0, 0, 0, 0, time.UTC))
}

// first returns the date that starts the window of unit u holding a.
func (u CalendarUnit) first(a date) date {
	switch u {
	case CalendarWeek:
		wd := time.Date(a.y, a.m, a.d, 0, 0, 0, 0, time.UTC).Weekday()
		return date{a.y, a.m, a.d - (int(wd)+6)%7}.norm() // back to Monday
	case CalendarMonth:
		return date{a.y, a.m, 1}
	}
	return a
}

// add returns the first date of the window k windows after the one that
// starts on a (before it when k < 0).
func (u CalendarUnit) add(a date, k int) date {
	switch u {
	case CalendarWeek:
		return date{a.y, a.m, a.d + 7*k}.norm()
	case CalendarMonth:
		return date{a.y, a.m + time.Month(k), 1}.norm()
	}
	return date{a.y, a.m, a.d + k}.norm()
}

// dayStart returns the first instant whose local date in loc is a or later.
// That is local midnight, except where a zone change skips midnight (the
// day then starts at the change) or repeats it (the first midnight counts);
// time.Date leaves both cases to chance.
func dayStart(a date, loc *time.Location) time.Time {
	c := time.Date(a.y, a.m, a.d, 0, 0, 0, 0, loc)
	if dateOf(c.In(loc)).before(a) {
		// Midnight was skipped: c is in the zone before the change, whose
		// end is the first instant of day a.
		_, end := c.ZoneBounds()
		return end
	}
	start, _ := c.ZoneBounds()
	if start.IsZero() {
		return c
	}
	prev := start.Add(-time.Nanosecond)
	if dateOf(prev.In(loc)).before(a) {
		return c
	}
	// The zone before c's already reached day a: its own midnight is the
	// earlier one.
	_, offset := prev.In(loc).Zone()
	return time.Date(a.y, a.m, a.d, 0, 0, 0, 0, time.FixedZone("", offset))
}

// Window returns the calendar window holding t: its start (inclusive) and
// end (exclusive). c must be valid ([Limit.Validate]).
func (c Calendar) Window(t time.Time) (start, end time.Time) {
	first := c.Unit.first(dateOf(t.In(c.Location)))
	start, end = dayStart(first, c.Location), dayStart(c.Unit.add(first, 1), c.Location)
	// A zone change that sets the clock back across midnight shows the
	// previous date again after the next window started: t belongs to it.
	for !t.Before(end) {
		first = c.Unit.add(first, 1)
		start, end = end, dayStart(c.Unit.add(first, 1), c.Location)
	}
	return start, end
}

// Boundaries appends to dst the starts of 2 × [CalendarSpan] + 2
// consecutive windows, in increasing order: [CalendarSpan] windows before
// the one holding around, that window, and [CalendarSpan] after it (the
// last value ends the last window). A store that decides by its own
// clock, such as Redis, is passed this list, computed from the app's
// clock, and picks the window holding its own time: the boundaries come
// from the time zone database, which the store does not have, and a
// disagreement between the two clocks smaller than the span moves no
// boundary. c must be valid ([Limit.Validate]).
func (c Calendar) Boundaries(dst []time.Time, around time.Time) []time.Time {
	start, _ := c.Window(around)
	first := c.Unit.first(dateOf(start.In(c.Location)))
	for k := -CalendarSpan; k <= CalendarSpan+1; k++ {
		dst = append(dst, dayStart(c.Unit.add(first, k), c.Location))
	}
	return dst
}

// validate reports what makes c unusable for a limit of algorithm a.
func (c Calendar) validate(name string, a Algorithm, period time.Duration) error {
	switch {
	case a != CalendarWindow && c != Calendar{}:
		return fmt.Errorf("limit %q: Calendar is set, but Algorithm is %s; calendar quotas are counted by CalendarWindow (PerCalendarDay, PerCalendarWeek, PerCalendarMonth)", name, a)
	case a != CalendarWindow:
		return nil
	case c.Unit == NotCalendar || c.Unit >= numCalendarUnits:
		return fmt.Errorf("limit %q: Calendar.Unit must be CalendarDay, CalendarWeek or CalendarMonth for Algorithm calendar_window, got %s", name, c.Unit)
	case c.Location == nil:
		return fmt.Errorf("limit %q: Calendar.Location must not be nil; use time.LoadLocation(\"Europe/Madrid\") or time.UTC", name)
	case c.Location == time.Local:
		return fmt.Errorf("limit %q: Calendar.Location must not be time.Local, whose rules depend on each node's TZ; load the zone by name (time.LoadLocation)", name)
	case c.Location.String() == "":
		return fmt.Errorf("limit %q: Calendar.Location has no name; name it (time.FixedZone(\"UTC+2\", 7200)) so the limit's name can say it", name)
	case period != c.Unit.Period():
		return fmt.Errorf("limit %q: Period must be %s, the nominal length of a calendar %s, got %s", name, c.Unit.Period(), c.Unit, period)
	}
	return nil
}

// appendCalendarName appends "<unit>-<zone>" to b, the zone's name with
// '/' written '.' and any other byte a limit name cannot hold written '_':
// "month-Europe.Madrid", "day-Etc.GMT_5" (for Etc/GMT+5).
func appendCalendarName(b []byte, c Calendar) []byte {
	b = append(b, c.Unit.String()...)
	if c.Location == nil {
		return b
	}
	b = append(b, '-')
	zone := c.Location.String()
	for i := 0; i < len(zone); i++ {
		switch ch := zone[i]; {
		case ch == '/':
			b = append(b, '.')
		case isNameByte(ch):
			b = append(b, ch)
		default:
			b = append(b, '_')
		}
	}
	return b
}

// PerCalendarDay returns a quota of rate requests per local day in loc,
// resetting at local midnight (Algorithm [CalendarWindow]).
func PerCalendarDay(rate int64, loc *time.Location) Limit {
	return calendarLimit(rate, CalendarDay, loc)
}

// PerCalendarWeek returns a quota of rate requests per ISO week in loc,
// resetting on Mondays at local midnight.
func PerCalendarWeek(rate int64, loc *time.Location) Limit {
	return calendarLimit(rate, CalendarWeek, loc)
}

// PerCalendarMonth returns a quota of rate requests per calendar month in
// loc, resetting on the 1st at local midnight: "10,000 per month,
// resetting in Europe/Madrid" is PerCalendarMonth(10000, madrid).
func PerCalendarMonth(rate int64, loc *time.Location) Limit {
	return calendarLimit(rate, CalendarMonth, loc)
}

func calendarLimit(rate int64, u CalendarUnit, loc *time.Location) Limit {
	return Limit{Rate: rate, Period: u.Period(), Algorithm: CalendarWindow, Calendar: Calendar{Unit: u, Location: loc}}
}
