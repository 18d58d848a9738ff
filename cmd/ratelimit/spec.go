package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// limitFlag collects the limits of repeated --limit flags.
type limitFlag []core.Limit

func (f *limitFlag) String() string { return "" }

func (f *limitFlag) Set(spec string) error {
	l, err := parseLimit(spec)
	if err != nil {
		return err
	}
	*f = append(*f, l)
	return nil
}

// parseLimit parses a compact limit spec:
//
//	[name=]RATE/PERIOD[,burst=N][,alg=ALGORITHM]
//
// PERIOD is a Go duration ("1s", "90m"), a number of days ("1d") or a
// bare unit ("s", "m", "h", "d"); ALGORITHM is a name (gcra, token_bucket,
// fixed_window, sliding_window, sliding_log, calendar_window, concurrency)
// or a key tag (g, t, f, s, l, c, i). For concurrency, RATE/PERIOD is the
// most requests in flight and the lease TTL: "2/30s,alg=concurrency" is
// core.Concurrent(2), named "2-in-flight".
// "per-second=10/1s,burst=100" is core.PerSecond(10).WithBurst(100) named
// "per-second". PERIOD "day", "week" or "month" is a calendar quota in the
// zone of a tz=ZONE option (default UTC): "10000/month,tz=Europe/Madrid"
// is core.PerCalendarMonth(10000, madrid).
func parseLimit(spec string) (core.Limit, error) {
	fields := strings.Split(spec, ",")
	var l core.Limit
	quota := fields[0]
	if name, q, ok := strings.Cut(quota, "="); ok {
		l.Name, quota = name, q
	}
	rate, period, ok := strings.Cut(quota, "/")
	if !ok {
		return l, fmt.Errorf("ratelimit: limit %q: want [name=]RATE/PERIOD[,burst=N][,alg=ALGORITHM], e.g. api=10/1s,burst=100", spec)
	}
	var err error
	if l.Rate, err = strconv.ParseInt(rate, 10, 64); err != nil {
		return l, fmt.Errorf("ratelimit: limit %q: rate %q is not an integer", spec, rate)
	}
	unit, calendar := calendarUnits[period]
	if calendar {
		l.Period, l.Algorithm, l.Calendar = unit.Period(), core.CalendarWindow, core.Calendar{Unit: unit, Location: time.UTC}
	} else if l.Period, err = parsePeriod(period); err != nil {
		return l, fmt.Errorf("ratelimit: limit %q: %w", spec, err)
	}
	for _, f := range fields[1:] {
		if err := setOption(&l, f); err != nil {
			return l, fmt.Errorf("ratelimit: limit %q: %w", spec, err)
		}
	}
	if err := l.Validate(); err != nil {
		return l, err
	}
	l.Name = l.EffectiveName()
	return l, nil
}

func setOption(l *core.Limit, field string) error {
	key, value, _ := strings.Cut(field, "=")
	switch key {
	case "burst":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("burst %q is not an integer", value)
		}
		l.Burst = n
	case "alg", "algorithm":
		a, ok := parseAlgorithm(value)
		if !ok {
			return fmt.Errorf("unknown algorithm %q; want one of %s", value, algorithmNames())
		}
		l.Algorithm = a
	case "tz":
		if l.Calendar.Unit == core.NotCalendar {
			return fmt.Errorf("tz=%s applies to the calendar periods day, week and month only", value)
		}
		loc, err := time.LoadLocation(value)
		if err != nil || value == "" || value == "Local" {
			return fmt.Errorf("tz %q is not a zone of the time zone database (Europe/Madrid, UTC)", value)
		}
		l.Calendar.Location = loc
	default:
		return fmt.Errorf("unknown option %q; want burst=N, alg=ALGORITHM or tz=ZONE", field)
	}
	return nil
}

// calendarUnits are the PERIODs of calendar quotas.
var calendarUnits = map[string]core.CalendarUnit{
	"day": core.CalendarDay, "week": core.CalendarWeek, "month": core.CalendarMonth,
}

// parsePeriod parses "1s", "90m", "2d" or a bare unit ("s", "m", "h", "d").
func parsePeriod(s string) (time.Duration, error) {
	if s == "s" || s == "m" || s == "h" || s == "d" {
		s = "1" + s
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err == nil && n > 0 && n <= 366 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("period %q is not a duration like 1s, 15m or 1d", s)
	}
	return d, nil
}

func parseAlgorithm(s string) (core.Algorithm, bool) {
	for _, a := range algorithms() {
		if s == a.String() || s == a.Tag() {
			return a, true
		}
	}
	return 0, false
}

func algorithmNames() string {
	var names []string
	for _, a := range algorithms() {
		names = append(names, a.String())
	}
	return strings.Join(names, ", ")
}

// recipeTier returns the limits of the named tier of [core.RecipeTiers].
func recipeTier(name string) ([]core.Limit, error) {
	var names []string
	for _, t := range core.RecipeTiers() {
		if t.Name == name {
			return t.Limits, nil
		}
		names = append(names, t.Name)
	}
	return nil, fmt.Errorf("ratelimit: --tier %q: not a tier of the recipe (%s); describe other limits with --limit", name, strings.Join(names, ", "))
}

// describeLimit returns l as "10/1s burst 100" for tables, a concurrency
// limit as "2 in flight, lease 30s".
func describeLimit(l core.Limit) string {
	if l.Algorithm == core.CalendarWindow && l.Calendar.Location != nil {
		return fmt.Sprintf("%d/%s %s", l.Rate, l.Calendar.Unit, l.Calendar.Location)
	}
	if l.Algorithm == core.Concurrency {
		return fmt.Sprintf("%d in flight, lease %s", l.Rate, fmtDuration(l.Period))
	}
	s := fmt.Sprintf("%d/%s", l.Rate, fmtDuration(l.Period))
	if l.Burst != 0 && l.Burst != l.Rate {
		s += fmt.Sprintf(" burst %d", l.Burst)
	}
	return s
}
