package storetest

import (
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

const day = 24 * hour

// mustLoadLocation returns the named zone of Go's time zone database, or
// fails the test: the calendar cases need the system's zoneinfo (or a
// binary built with time/tzdata).
func mustLoadLocation(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("storetest: time.LoadLocation(%q): %v (install tzdata or import time/tzdata)", name, err)
	}
	return loc
}

// at returns the instant of an RFC 3339 string; the tables use UTC.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic("storetest: table error: " + err.Error())
	}
	return t
}

// calendarTests are the tables of calendar windows (docs/algorithms.md,
// "Calendar windows"): a fixed window whose bounds are local midnights,
// Mondays and 1sts of a time zone, so days of 23 and 25 hours, months of
// 28 to 31 days. Each case starts (from) at an instant given in UTC, with
// the local time beside it; every reset and wait is the time to the real
// end of the window, from the reading.
func calendarTests(t *testing.T) []sequence {
	madrid := mustLoadLocation(t, "Europe/Madrid")
	newYork := mustLoadLocation(t, "America/New_York")
	return []sequence{
		{
			// 00:00 CET on Sunday 30 March 2025; at 02:00 CET the clocks
			// jump to 03:00 CEST, and the day ends at 22:00Z: 23 hours.
			name:   "Madrid day: the spring change makes a 23-hour day",
			limits: []core.Limit{core.PerCalendarDay(3, madrid)},
			from:   at("2025-03-29T23:00:00Z"),
			steps: []step{
				take(0, 0, ok(3, 0)),
				take(0, 1, ok(2, 23*hour)),
				take(0, 4, tooHigh(2, 23*hour)),
				take(22*hour, 2, ok(0, hour)),
				take(23*hour-us, 1, denied(0, us, us)),
				// Monday 31 March, 00:00 CEST: a full quota, a 24-hour day.
				take(23*hour, 1, ok(2, day)),
			},
		},
		{
			// 00:00 CEST on Sunday 26 October 2025; at 03:00 CEST the
			// clocks go back to 02:00 CET: the day ends at 23:00Z, after 25
			// hours, where a 24-hour window would already have reset.
			name:   "Madrid day: the autumn change makes a 25-hour day",
			limits: []core.Limit{core.PerCalendarDay(3, madrid)},
			from:   at("2025-10-25T22:00:00Z"),
			steps: []step{
				take(0, 3, ok(0, 25*hour)),
				take(day, 1, denied(0, hour, hour)),
				take(25*hour, 1, ok(2, day)),
			},
		},
		{
			// 00:00 EST on Sunday 9 March 2025 (05:00Z); the day ends at
			// 04:00Z on the 10th (00:00 EDT).
			name:   "New York day: the spring change makes a 23-hour day",
			limits: []core.Limit{core.PerCalendarDay(2, newYork)},
			from:   at("2025-03-09T05:00:00Z"),
			steps: []step{
				take(hour, 2, ok(0, 22*hour)),
				take(23*hour-ms, 1, denied(0, ms, ms)),
				take(23*hour, 2, ok(0, day)),
			},
		},
		{
			// 00:00 EDT on Sunday 2 November 2025 (04:00Z); the day ends at
			// 05:00Z on the 3rd (00:00 EST).
			name:   "New York day: the autumn change makes a 25-hour day",
			limits: []core.Limit{core.PerCalendarDay(2, newYork)},
			from:   at("2025-11-02T04:00:00Z"),
			steps: []step{
				take(0, 2, ok(0, 25*hour)),
				take(day+30*minute, 1, denied(0, 30*minute, 30*minute)),
				take(25*hour, 1, ok(1, day)),
			},
		},
		{
			// 23:00Z on 31 January is midnight of 1 February in Madrid.
			name:   "Madrid month: 31 January to 1 February, a 28-day February",
			limits: []core.Limit{core.PerCalendarMonth(5, madrid)},
			from:   at("2025-01-31T23:00:00Z"),
			steps: []step{
				take(-sec, 5, ok(0, sec)),
				take(-us, 1, denied(0, us, us)),
				take(0, 1, ok(4, 28*day)),
				take(28*day-us, 4, ok(0, us)),
				take(28*day, 1, ok(4, 31*day-hour)), // March loses an hour to CEST
			},
		},
		{
			name:   "UTC month: February of a leap year has a 29th",
			limits: []core.Limit{core.PerCalendarMonth(5, time.UTC)},
			from:   at("2024-02-01T00:00:00Z"),
			steps: []step{
				take(0, 5, ok(0, 29*day)),
				// 28 February 2024 ends; the 29th is still February.
				take(28*day, 1, denied(0, day, day)),
				take(29*day, 1, ok(4, 31*day)),
			},
		},
		{
			name:   "UTC day: 28 February, the leap day, 1 March",
			limits: []core.Limit{core.PerCalendarDay(1, time.UTC)},
			from:   at("2024-02-28T00:00:00Z"),
			steps: []step{
				take(0, 1, ok(0, day)),
				take(day-us, 1, denied(0, us, us)),
				take(day, 1, ok(0, day)),
				take(2*day-us, 1, denied(0, us, us)),
				take(2*day, 1, ok(0, day)),
			},
		},
		{
			// 23:59:59 CET on 31 December 2025; January 2026 has 31 days
			// and no change of offset.
			name:   "Madrid month: 31 December to 1 January",
			limits: []core.Limit{core.PerCalendarMonth(2, madrid)},
			from:   at("2025-12-31T22:59:59Z"),
			steps: []step{
				take(0, 2, ok(0, sec)),
				take(sec, 1, ok(1, 31*day)),
			},
		},
		{
			// Sunday 28 December 2025; the ISO week 1 of 2026 starts on
			// Monday 29 December 2025 and ends on Monday 5 January.
			name:   "UTC week: ISO week 1 starts in December",
			limits: []core.Limit{core.PerCalendarWeek(3, time.UTC)},
			from:   at("2025-12-28T00:00:00Z"),
			steps: []step{
				take(0, 3, ok(0, day)),
				take(day, 1, ok(2, 7*day)),
				take(4*day, 2, ok(0, 4*day)), // 1 January 2026: the same week
				take(8*day-us, 1, denied(0, us, us)),
				take(8*day, 1, ok(2, 7*day)),
			},
		},
		{
			// Monday 24 March 2025, 00:00 CET: the week holding the spring
			// change lasts 167 hours.
			name:   "Madrid week: 167 hours across the spring change",
			limits: []core.Limit{core.PerCalendarWeek(10, madrid)},
			from:   at("2025-03-23T23:00:00Z"),
			steps: []step{
				take(0, 10, ok(0, 167*hour)),
				take(7*day-hour-us, 1, denied(0, us, us)),
				take(7*day-hour, 1, ok(9, 7*day)),
			},
		},
		{
			// Midnight of 31 March in Madrid (22:00Z on the 30th) is a
			// boundary; a reading 1 ms before it, after a take in the new
			// day, stays in the new day, and the waits count from the
			// reading (docs/algorithms.md, "A clock that goes back brings
			// no quota back").
			name:   "Madrid day: a clock going back across midnight does not reopen the old day",
			limits: []core.Limit{core.PerCalendarDay(3, madrid)},
			from:   at("2025-03-30T22:00:00Z"),
			steps: []step{
				take(-hour, 1, ok(2, hour)),
				take(sec, 3, ok(0, day-sec)),
				take(-ms, 1, denied(0, day+ms, day+ms)),
				take(-ms, 0, ok(0, day+ms)),
				take(day, 1, ok(2, day)),
			},
		},
		{
			// All or nothing with the other limits of the tier: the
			// calendar day admits, the bucket denies, nothing is charged.
			name: "New York day with GCRA 1 per second",
			limits: []core.Limit{
				core.PerCalendarDay(2, newYork),
				core.PerSecond(1),
			},
			from: at("2025-01-01T05:00:00Z"),
			steps: []step{
				take(0, 1, ok(1, day), ok(0, sec)),
				take(0, 1, ok(1, day), denied(0, sec, sec)),
				take(sec, 1, ok(0, day-sec), ok(0, sec)),
				take(2*sec, 1, denied(0, day-2*sec, day-2*sec), ok(1, 0)),
			},
		},
	}
}

// NewSkewedStore returns a fresh store whose own clock is storeNow (the
// one that decides, like Redis TIME) and whose app clock, from which a
// store computes the calendar boundaries it passes to a server, is appNow.
// A store that reads one clock ignores appNow.
type NewSkewedStore func(t *testing.T, storeNow, appNow func() time.Time) core.Store

// RunCalendarSkew runs the calendar tables with an app clock off by
// minutes to hours from the store's clock, ahead and behind, within the
// documented span ([core.CalendarSpan]): the store's clock alone decides
// the window, so every decision is the one of the tables.
func RunCalendarSkew(t *testing.T, newStore NewSkewedStore) {
	for _, skew := range []time.Duration{-45 * hour, -5 * hour, -90 * sec, 7 * minute, 11 * hour, 45 * hour} {
		t.Run("app clock off by "+skew.String(), func(t *testing.T) {
			runSequences(t, func(t *testing.T, now func() time.Time) core.Store {
				return newStore(t, now, func() time.Time { return now().Add(skew) })
			}, calendarTests(t))
		})
	}
}
