package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// limitJSON is the JSON form of a [Limit]: the field names of the policy
// document (docs/policy.md), durations as Go duration strings, the
// algorithm and the calendar unit by name, the zone by its IANA name.
type limitJSON struct {
	Name      string       `json:"name,omitempty"`
	Rate      int64        `json:"rate"`
	Period    string       `json:"period,omitempty"`
	Burst     int64        `json:"burst,omitempty"`
	Algorithm string       `json:"algorithm,omitempty"`
	Calendar  string       `json:"calendar,omitempty"`
	Zone      string       `json:"zone,omitempty"`
	Lockout   *lockoutJSON `json:"lockout,omitempty"`
}

// lockoutJSON is the JSON form of a [Lockout].
type lockoutJSON struct {
	After      int64  `json:"after"`
	Within     string `json:"within,omitempty"`
	For        string `json:"for,omitempty"`
	Multiplier int64  `json:"multiplier,omitempty"`
	Max        string `json:"max,omitempty"`
	Cooldown   string `json:"cooldown,omitempty"`
}

// MarshalJSON encodes l with the field names of the policy document:
//
//	{"name":"per-second","rate":10,"period":"1s","burst":100,"algorithm":"gcra"}
//	{"name":"daily","rate":1000,"algorithm":"calendar_window","calendar":"day","zone":"Europe/Madrid"}
//	{"name":"attempts","rate":5,"period":"1m","algorithm":"gcra",
//	 "lockout":{"after":10,"within":"15m","for":"15m","multiplier":2,"max":"24h","cooldown":"24h"}}
//
// Zero fields are left out (a calendar limit's period, which its unit
// implies, too). It fails for a calendar zone that is not an IANA name
// time.LoadLocation knows (a time.FixedZone): such a limit could not be
// read back on another node. It does not validate l ([Limit.Validate]).
func (l Limit) MarshalJSON() ([]byte, error) {
	j := limitJSON{Name: l.Name, Rate: l.Rate, Burst: l.Burst, Algorithm: l.Algorithm.String()}
	if l.Algorithm >= numAlgorithms {
		return nil, fmt.Errorf("ratelimit: limit %q: unknown Algorithm %d", l.EffectiveName(), uint8(l.Algorithm))
	}
	if l.Algorithm != CalendarWindow || l.Period != l.Calendar.Unit.Period() {
		j.Period = formatDuration(l.Period)
	}
	if err := j.setCalendar(l); err != nil {
		return nil, err
	}
	if l.Lockout != (Lockout{}) {
		lo := l.Lockout
		j.Lockout = &lockoutJSON{After: lo.After, Within: formatDuration(lo.Within), For: formatDuration(lo.For),
			Multiplier: lo.Multiplier, Max: formatDuration(lo.Max), Cooldown: formatDuration(lo.Cooldown)}
	}
	return json.Marshal(j)
}

// setCalendar sets the calendar and zone of j from l's Calendar.
func (j *limitJSON) setCalendar(l Limit) error {
	c := l.Calendar
	if c.Unit != NotCalendar {
		j.Calendar = c.Unit.String()
	}
	if c.Location == nil {
		return nil
	}
	j.Zone = c.Location.String()
	if _, err := loadZone(j.Zone); err != nil {
		return fmt.Errorf("ratelimit: limit %q: %w", l.EffectiveName(), err)
	}
	return nil
}

// UnmarshalJSON decodes the form [Limit.MarshalJSON] writes, strictly: an
// unknown field, a bad duration ("period": "5 minutes"), an unknown
// algorithm, calendar unit or zone, or trailing data is an error naming
// the field. An absent algorithm is GCRA; an absent period is the
// nominal length of the calendar unit for a calendar limit and
// [DefaultLeaseTTL] for a [Concurrency] limit. It does not validate the
// limit: [Limit.Validate] does, and so does every use of it.
func (l *Limit) UnmarshalJSON(data []byte) error {
	var j limitJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("ratelimit: limit: %w", err)
	}
	if dec.More() {
		return errors.New("ratelimit: limit: trailing data after the object")
	}
	v, err := j.limit()
	if err != nil {
		return fmt.Errorf("ratelimit: limit %q: %w", j.Name, err)
	}
	*l = v
	return nil
}

// limit returns the Limit j describes.
func (j *limitJSON) limit() (Limit, error) {
	l := Limit{Name: j.Name, Rate: j.Rate, Burst: j.Burst}
	var err error
	if l.Algorithm, err = ParseAlgorithm(j.Algorithm); err != nil {
		return Limit{}, fmt.Errorf("algorithm: %w", err)
	}
	if l.Calendar.Unit, err = ParseCalendarUnit(j.Calendar); err != nil {
		return Limit{}, fmt.Errorf("calendar: %w", err)
	}
	if j.Zone != "" {
		if l.Calendar.Location, err = loadZone(j.Zone); err != nil {
			return Limit{}, err
		}
	}
	if l.Period, err = parseDuration("period", j.Period); err != nil {
		return Limit{}, err
	}
	if j.Period == "" {
		l.Period = defaultPeriod(l)
	}
	if j.Lockout != nil {
		l.Lockout, err = j.Lockout.lockout()
	}
	return l, err
}

// defaultPeriod is the Period of a limit whose document gives none.
func defaultPeriod(l Limit) time.Duration {
	switch l.Algorithm {
	case CalendarWindow:
		return l.Calendar.Unit.Period()
	case Concurrency:
		return DefaultLeaseTTL
	}
	return 0 // Validate says it is missing
}

// lockout returns the Lockout j describes.
func (j *lockoutJSON) lockout() (Lockout, error) {
	lo := Lockout{After: j.After, Multiplier: j.Multiplier}
	for _, f := range []struct {
		name string
		text string
		dst  *time.Duration
	}{{"within", j.Within, &lo.Within}, {"for", j.For, &lo.For}, {"max", j.Max, &lo.Max}, {"cooldown", j.Cooldown, &lo.Cooldown}} {
		d, err := parseDuration("lockout."+f.name, f.text)
		if err != nil {
			return Lockout{}, err
		}
		*f.dst = d
	}
	return lo, nil
}

// ParseAlgorithm returns the algorithm named name, as [Algorithm.String]
// writes it ("gcra", "token_bucket", "fixed_window", "sliding_window",
// "sliding_log", "calendar_window", "concurrency"); "" is [GCRA].
func ParseAlgorithm(name string) (Algorithm, error) {
	if name == "" {
		return GCRA, nil
	}
	for a, n := range algorithmNames {
		if n == name {
			return Algorithm(a), nil
		}
	}
	return 0, fmt.Errorf("unknown algorithm %q; want one of %s", name, strings.Join(algorithmNames[:], ", "))
}

// ParseCalendarUnit returns the calendar unit named name ("day", "week",
// "month"); "" is [NotCalendar].
func ParseCalendarUnit(name string) (CalendarUnit, error) {
	for u, n := range calendarUnitNames {
		if n == name {
			return CalendarUnit(u), nil
		}
	}
	return 0, fmt.Errorf("unknown calendar unit %q; want day, week or month", name)
}

// loadZone loads the IANA time zone name, refusing "Local", whose rules
// depend on each node's TZ.
func loadZone(name string) (*time.Location, error) {
	if name == "Local" {
		return nil, errors.New(`zone: "Local" depends on each node's TZ; name the zone ("Europe/Madrid", "UTC")`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("zone: %w", err)
	}
	return loc, nil
}

// parseDuration parses the Go duration s of the field named field; ""
// is 0.
func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return d, nil
}

// formatDuration writes d as a Go duration without the zero units
// time.Duration.String puts after the largest one: "1m", "24h", "1h30m",
// "500ms"; "" for 0, which the JSON leaves out.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
