package core

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err, "time.LoadLocation(%q): the tests need the system's time zone database", name)
	return loc
}

func utc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// TestCalendarWindow pins the window holding an instant, as UTC instants
// worked out from the zone rules: DST changes (23- and 25-hour days),
// month ends in leap and common years, ISO weeks across a year end, and
// the zones whose changes skip or repeat midnight.
func TestCalendarWindow(t *testing.T) {
	tests := []struct {
		name               string
		zone               string
		unit               CalendarUnit
		at                 string
		wantStart, wantEnd string
	}{
		{"Madrid spring forward: a 23-hour day", "Europe/Madrid", CalendarDay, "2025-03-30T12:00:00Z", "2025-03-29T23:00:00Z", "2025-03-30T22:00:00Z"},
		{"Madrid fall back: a 25-hour day", "Europe/Madrid", CalendarDay, "2025-10-26T12:00:00Z", "2025-10-25T22:00:00Z", "2025-10-26T23:00:00Z"},
		{"Madrid: the last µs of a day", "Europe/Madrid", CalendarDay, "2025-03-30T21:59:59.999999Z", "2025-03-29T23:00:00Z", "2025-03-30T22:00:00Z"},
		{"Madrid: local midnight starts the next day", "Europe/Madrid", CalendarDay, "2025-03-30T22:00:00Z", "2025-03-30T22:00:00Z", "2025-03-31T22:00:00Z"},
		{"New York spring forward", "America/New_York", CalendarDay, "2025-03-09T12:00:00Z", "2025-03-09T05:00:00Z", "2025-03-10T04:00:00Z"},
		{"New York fall back", "America/New_York", CalendarDay, "2025-11-02T12:00:00Z", "2025-11-02T04:00:00Z", "2025-11-03T05:00:00Z"},
		{"New York: 23:30 local is still the old day in UTC's next day", "America/New_York", CalendarDay, "2025-01-01T04:30:00Z", "2024-12-31T05:00:00Z", "2025-01-01T05:00:00Z"},
		{"UTC day", "UTC", CalendarDay, "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "2025-01-02T00:00:00Z"},
		{"Sao Paulo 2018: midnight skipped, the day starts at 01:00", "America/Sao_Paulo", CalendarDay, "2018-11-04T12:00:00Z", "2018-11-04T03:00:00Z", "2018-11-05T02:00:00Z"},
		{"Havana: midnight repeated, the first one counts", "America/Havana", CalendarDay, "2025-11-02T12:00:00Z", "2025-11-02T04:00:00Z", "2025-11-03T05:00:00Z"},
		{"Beirut: clocks back from 00:00 to 23:00, Saturday lasts 25 hours", "Asia/Beirut", CalendarDay, "2025-10-25T21:30:00Z", "2025-10-24T21:00:00Z", "2025-10-25T22:00:00Z"},
		{"Apia 2011: 30 December skipped", "Pacific/Apia", CalendarDay, "2011-12-29T12:00:00Z", "2011-12-29T10:00:00Z", "2011-12-30T10:00:00Z"},
		{"ISO week across a year end starts Monday 30 December", "Europe/Madrid", CalendarWeek, "2025-01-01T12:00:00Z", "2024-12-29T23:00:00Z", "2025-01-05T23:00:00Z"},
		{"ISO week: Sunday 23:59 local is the old week", "Europe/Madrid", CalendarWeek, "2025-01-05T22:59:59Z", "2024-12-29T23:00:00Z", "2025-01-05T23:00:00Z"},
		{"ISO week holding the spring change lasts 167 hours", "Europe/Madrid", CalendarWeek, "2025-03-27T12:00:00Z", "2025-03-23T23:00:00Z", "2025-03-30T22:00:00Z"},
		{"February of a leap year: 29 days", "Europe/Madrid", CalendarMonth, "2024-02-29T12:00:00Z", "2024-01-31T23:00:00Z", "2024-02-29T23:00:00Z"},
		{"February of a common year: 28 days", "Europe/Madrid", CalendarMonth, "2025-02-28T22:59:59Z", "2025-01-31T23:00:00Z", "2025-02-28T23:00:00Z"},
		{"31 January 23:00 UTC is February in Madrid", "Europe/Madrid", CalendarMonth, "2025-01-31T23:00:00Z", "2025-01-31T23:00:00Z", "2025-02-28T23:00:00Z"},
		{"March in Madrid: 31 days less an hour", "Europe/Madrid", CalendarMonth, "2025-03-15T00:00:00Z", "2025-02-28T23:00:00Z", "2025-03-31T22:00:00Z"},
		{"December to January", "America/New_York", CalendarMonth, "2025-12-31T23:00:00Z", "2025-12-01T05:00:00Z", "2026-01-01T05:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Calendar{Unit: tt.unit, Location: mustLoad(t, tt.zone)}
			start, end := c.Window(utc(t, tt.at))
			assert.Equal(t, utc(t, tt.wantStart), start.UTC(), "start")
			assert.Equal(t, utc(t, tt.wantEnd), end.UTC(), "end")
		})
	}
}

// TestCalendarBoundaries checks the list the app passes to Redis: the
// CalendarSpan windows each side of the one holding the instant, in
// order, each one the window of its own start.
func TestCalendarBoundaries(t *testing.T) {
	madrid := mustLoad(t, "Europe/Madrid")
	tests := []struct {
		name string
		c    Calendar
		at   string
		want []string
	}{
		{"days across the spring change", Calendar{CalendarDay, madrid}, "2025-03-30T12:00:00Z",
			[]string{"2025-03-27T23:00:00Z", "2025-03-28T23:00:00Z", "2025-03-29T23:00:00Z", "2025-03-30T22:00:00Z", "2025-03-31T22:00:00Z", "2025-04-01T22:00:00Z"}},
		{"months across a year end and a leap February", Calendar{CalendarMonth, madrid}, "2024-01-15T00:00:00Z",
			[]string{"2023-10-31T23:00:00Z", "2023-11-30T23:00:00Z", "2023-12-31T23:00:00Z", "2024-01-31T23:00:00Z", "2024-02-29T23:00:00Z", "2024-03-31T22:00:00Z"}},
		{"ISO weeks across a year end", Calendar{CalendarWeek, time.UTC}, "2026-01-01T00:00:00Z",
			[]string{"2025-12-15T00:00:00Z", "2025-12-22T00:00:00Z", "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.c.Boundaries(nil, utc(t, tt.at))
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				assert.Equal(t, utc(t, w), got[i].UTC(), "boundary %d", i)
			}
			for i := 0; i+1 < len(got); i++ {
				start, end := tt.c.Window(got[i])
				assert.Equal(t, got[i], start, "window %d starts at its boundary", i)
				assert.Equal(t, got[i+1], end, "window %d ends at the next boundary", i)
			}
		})
	}
}

// TestCalendarWindowsTile walks every window of several years in zones
// with DST (and odd changes) and checks that the windows tile time: each
// starts where the last ended, holds its own start and last µs, and starts
// at a local midnight (or the first instant of its date), on a Monday for
// weeks and the 1st for months.
func TestCalendarWindowsTile(t *testing.T) {
	for _, zone := range []string{"Europe/Madrid", "America/New_York", "America/Sao_Paulo", "America/Havana", "Asia/Beirut", "Pacific/Apia", "Australia/Lord_Howe"} {
		loc := mustLoad(t, zone)
		for _, u := range []CalendarUnit{CalendarDay, CalendarWeek, CalendarMonth} {
			c := Calendar{Unit: u, Location: loc}
			start, end := c.Window(utc(t, "2010-01-01T00:00:00Z"))
			for start.Before(utc(t, "2027-01-01T00:00:00Z")) {
				s, e := c.Window(end.Add(-time.Microsecond))
				require.Equal(t, start, s, "%s %s: the last µs of the window starting %s", zone, u, start)
				require.Equal(t, end, e, "%s %s: the last µs of the window starting %s", zone, u, start)
				next, nextEnd := c.Window(end)
				require.Equal(t, end, next, "%s %s: the window after %s starts at its end", zone, u, start)
				local := next.In(loc)
				switch u {
				case CalendarWeek:
					require.Equal(t, time.Monday, local.Weekday(), "%s: week starting %s", zone, local)
				case CalendarMonth:
					require.Equal(t, 1, local.Day(), "%s: month starting %s", zone, local)
				}
				start, end = next, nextEnd
			}
		}
	}
}

func TestCalendarLimits(t *testing.T) {
	madrid := mustLoad(t, "Europe/Madrid")
	tests := []struct {
		limit      Limit
		wantName   string
		wantPeriod time.Duration
		wantPolicy int64
	}{
		{PerCalendarDay(100, madrid), "100-per-day-Europe.Madrid", 24 * time.Hour, 86400},
		{PerCalendarWeek(500, time.UTC), "500-per-week-UTC", 7 * 24 * time.Hour, 604800},
		{PerCalendarMonth(10_000, madrid), "10000-per-month-Europe.Madrid", 30 * 24 * time.Hour, 2592000},
		{PerCalendarDay(5, mustLoad(t, "Etc/GMT+5")), "5-per-day-Etc.GMT_5", 24 * time.Hour, 86400},
		{PerCalendarDay(5, mustLoad(t, "Etc/GMT-5")), "5-per-day-Etc.GMT-5", 24 * time.Hour, 86400},
		{PerCalendarMonth(7, time.FixedZone("UTC+2", 7200)), "7-per-month-UTC_2", 30 * 24 * time.Hour, 2592000},
	}
	for _, tt := range tests {
		t.Run(tt.wantName, func(t *testing.T) {
			require.NoError(t, tt.limit.Validate())
			assert.Equal(t, CalendarWindow, tt.limit.Algorithm)
			assert.Equal(t, tt.wantName, tt.limit.EffectiveName())
			assert.Equal(t, tt.wantPeriod, tt.limit.Period)
			assert.Equal(t, tt.wantPolicy, tt.limit.PeriodSeconds())
			assert.Equal(t, tt.limit.Rate, tt.limit.Capacity())
		})
	}
}

func TestCalendarLimitValidation(t *testing.T) {
	madrid := mustLoad(t, "Europe/Madrid")
	tests := []struct {
		name  string
		limit Limit
		want  string
	}{
		{"nil location", PerCalendarMonth(10, nil), "Calendar.Location must not be nil"},
		{"time.Local", PerCalendarDay(10, time.Local), "Calendar.Location must not be time.Local"},
		{"unnamed fixed zone", PerCalendarDay(10, time.FixedZone("", 3600)), "Calendar.Location has no name"},
		{"no unit", Limit{Rate: 10, Period: 24 * time.Hour, Algorithm: CalendarWindow, Calendar: Calendar{Location: madrid}}, "Calendar.Unit must be"},
		{"unknown unit", Limit{Rate: 10, Period: 24 * time.Hour, Algorithm: CalendarWindow, Calendar: Calendar{Unit: 9, Location: madrid}}, "Calendar.Unit must be"},
		{"period not the unit's", PerCalendarMonth(10, madrid).WithName("m"), ""},
		{"period changed", Limit{Rate: 10, Period: 31 * 24 * time.Hour, Algorithm: CalendarWindow, Calendar: Calendar{CalendarMonth, madrid}}, "Period must be 720h0m0s"},
		{"calendar on another algorithm", PerCalendarDay(10, madrid).WithAlgorithm(FixedWindow), "Calendar is set, but Algorithm is fixed_window"},
		{"burst", PerCalendarDay(10, madrid).WithBurst(20), "Burst 20 differs from Rate 10"},
		{"derived name too long", PerCalendarMonth(10_000, mustLoad(t, "America/Argentina/Buenos_Aires")), "longer than 32 bytes"},
		{"named, a long zone is fine", PerCalendarMonth(10_000, mustLoad(t, "America/Argentina/Buenos_Aires")).WithName("monthly"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.limit.Validate()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), "ratelimit: limit "), "the error names the limit: %v", err)
		})
	}
}

// A calendar quota without a zone fails at construction, naming the field.
func TestNewLimiterRejectsCalendarWithoutLocation(t *testing.T) {
	_, err := NewLimiter(&recordingStore{}, WithLimits(PerCalendarMonth(10_000, nil)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `limit "10000-per-month": Calendar.Location must not be nil`)
}

// BenchmarkCalendarBoundaries measures the list a Redis store computes for
// every take of a calendar limit.
func BenchmarkCalendarBoundaries(b *testing.B) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	if err != nil {
		b.Fatal(err)
	}
	c := Calendar{Unit: CalendarDay, Location: madrid}
	buf := make([]time.Time, 0, calendarBoundaries)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		buf = c.Boundaries(buf[:0], now)
	}
}
