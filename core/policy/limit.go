package policy

import (
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratelimitkit/ratelimit/core"
)

const (
	limitFields   = "name, rate, period, burst, algorithm, calendar, zone and lockout"
	lockoutFields = "after, within, for, multiplier, max and cooldown"
)

// A limitNodes is the node of each field a limit item gave, by field name
// ("lockout.within" for the lockout's), for errors about them.
type limitNodes map[string]*yaml.Node

// limit reads one limit item (node n, at path p) into a core.Limit and
// validates it with core.
func (w *walker) limit(n *yaml.Node, p path) (core.Limit, *Error) {
	var l core.Limit
	pairs, err := w.mapping(n, p, "a limit")
	if err != nil {
		return l, err
	}
	at := make(limitNodes, len(pairs))
	for _, kv := range pairs {
		at[kv.key.Value] = kv.val
		if err := w.limitField(&l, kv, p.key(kv.key.Value), at); err != nil {
			return l, err
		}
	}
	if err := w.limitDefaults(&l, n, p, at); err != nil {
		return l, err
	}
	if err := l.Validate(); err != nil {
		return l, w.coreError(err, n, p, at)
	}
	return l, nil
}

// limitField reads the field kv of a limit into l.
func (w *walker) limitField(l *core.Limit, kv pair, p path, at limitNodes) *Error {
	var err *Error
	switch v := kv.val; kv.key.Value {
	case "name":
		l.Name, err = w.scalar(v, p, "a limit name")
	case "rate":
		l.Rate, err = w.integer(v, p)
	case "period":
		l.Period, err = w.duration(v, p)
	case "burst":
		l.Burst, err = w.integer(v, p)
		if err == nil && l.Burst == 0 {
			err = w.errAt(v, p, "0: leave burst out for a burst equal to the rate")
		}
	case "algorithm":
		l.Algorithm, err = w.algorithm(v, p)
	case "calendar":
		l.Calendar.Unit, err = w.calendarUnit(v, p)
	case "zone":
		l.Calendar.Location, err = w.zone(v, p)
	case "lockout":
		l.Lockout, err = w.lockout(v, p, at)
	default:
		err = w.unknown(kv.key, p, "a limit", limitFields)
	}
	return err
}

// limitDefaults checks the fields a limit must give and fills in those it
// may leave out: the algorithm (calendar_window when calendar is given,
// else gcra) and the period of a calendar limit (its unit's) and of a
// concurrency limit (core.DefaultLeaseTTL).
func (w *walker) limitDefaults(l *core.Limit, n *yaml.Node, p path, at limitNodes) *Error {
	if at["rate"] == nil {
		return w.errAt(n, p.key("rate"), "missing: a limit has a rate")
	}
	if at["algorithm"] == nil && at["calendar"] != nil {
		l.Algorithm = core.CalendarWindow
	}
	switch {
	case l.Algorithm == core.CalendarWindow:
		return w.calendarDefaults(l, n, p, at)
	case at["calendar"] != nil || at["zone"] != nil:
		field := "calendar"
		if at[field] == nil {
			field = "zone"
		}
		return w.errAt(at[field], p.key(field), "only a calendar_window limit has a %s; this one is %s", field, l.Algorithm)
	case at["period"] != nil:
		return nil
	case l.Algorithm == core.Concurrency:
		l.Period = core.DefaultLeaseTTL
		return nil
	}
	return w.errAt(n, p.key("period"), "missing: a %s limit has a period (a Go duration: 1s, 1m, 24h)", l.Algorithm)
}

// calendarDefaults checks a calendar_window limit's unit and zone, and
// gives it the unit's period unless it says one.
func (w *walker) calendarDefaults(l *core.Limit, n *yaml.Node, p path, at limitNodes) *Error {
	switch {
	case at["calendar"] == nil:
		return w.errAt(n, p.key("calendar"), "missing: a calendar_window limit has a calendar (day, week or month)")
	case at["zone"] == nil:
		return w.errAt(n, p.key("zone"), "missing: a calendar_window limit has a zone (UTC, or a name such as Europe/Madrid)")
	case at["period"] == nil:
		l.Period = l.Calendar.Unit.Period()
	}
	return nil
}

// duration reads a Go duration ("1s", "1m30s", "24h").
func (w *walker) duration(n *yaml.Node, p path) (time.Duration, *Error) {
	s, err := w.scalar(n, p, "a duration")
	if err != nil {
		return 0, err
	}
	d, perr := time.ParseDuration(s)
	if perr != nil || n.Tag != "!!str" {
		return 0, w.errAt(n, p, "want a Go duration such as 1s, 1m30s or 24h, got %s", describe(n))
	}
	return d, nil
}

// algorithm reads an algorithm by its name (core.Algorithm.String).
func (w *walker) algorithm(n *yaml.Node, p path) (core.Algorithm, *Error) {
	s, err := w.scalar(n, p, "an algorithm")
	if err != nil {
		return 0, err
	}
	var names []string
	for a := core.GCRA; a <= core.Concurrency; a++ {
		if a.String() == s {
			return a, nil
		}
		names = append(names, a.String())
	}
	return 0, w.errAt(n, p, "unknown algorithm %s: want %s", describe(n), joinNames(names))
}

// calendarUnit reads day, week or month.
func (w *walker) calendarUnit(n *yaml.Node, p path) (core.CalendarUnit, *Error) {
	s, err := w.scalar(n, p, "a calendar unit")
	if err != nil {
		return 0, err
	}
	for u := core.CalendarDay; u <= core.CalendarMonth; u++ {
		if u.String() == s {
			return u, nil
		}
	}
	return 0, w.errAt(n, p, "unknown calendar %s: want day, week or month", describe(n))
}

// zone reads a time zone by name, as time.LoadLocation finds it.
func (w *walker) zone(n *yaml.Node, p path) (*time.Location, *Error) {
	s, err := w.scalar(n, p, "a time zone")
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, w.errAt(n, p, "empty: name the zone (UTC, Europe/Madrid)")
	}
	loc, lerr := time.LoadLocation(s)
	if lerr != nil {
		return nil, w.errAt(n, p, "unknown time zone %q: want UTC or a name of the time zone database, such as Europe/Madrid", s)
	}
	return loc, nil
}

// lockout reads a lockout; after, within and for are required.
func (w *walker) lockout(n *yaml.Node, p path, at limitNodes) (core.Lockout, *Error) {
	var lo core.Lockout
	pairs, err := w.mapping(n, p, "a lockout")
	if err != nil {
		return lo, err
	}
	for _, kv := range pairs {
		fp, v := p.key(kv.key.Value), kv.val
		at["lockout."+kv.key.Value] = v
		switch kv.key.Value {
		case "after":
			lo.After, err = w.integer(v, fp)
		case "within":
			lo.Within, err = w.duration(v, fp)
		case "for":
			lo.For, err = w.duration(v, fp)
		case "multiplier":
			lo.Multiplier, err = w.integer(v, fp)
		case "max":
			lo.Max, err = w.duration(v, fp)
		case "cooldown":
			lo.Cooldown, err = w.duration(v, fp)
		default:
			err = w.unknown(kv.key, fp, "a lockout", lockoutFields)
		}
		if err != nil {
			return lo, err
		}
	}
	for _, f := range []string{"after", "within", "for"} {
		if at["lockout."+f] == nil {
			return lo, w.errAt(n, p.key(f), "missing: a lockout has after, within and for")
		}
	}
	return lo, nil
}

// coreFields are the fields core's validation errors name, longest first
// where one begins another, and the policy field of each.
var coreFields = []struct{ core, field string }{
	{"Calendar.Location", "zone"}, {"Calendar.Unit", "calendar"}, {"Calendar", "calendar"},
	{"Lockout.After", "lockout.after"}, {"Lockout.Within", "lockout.within"}, {"Lockout.For", "lockout.for"},
	{"Lockout.Multiplier", "lockout.multiplier"}, {"Lockout.Max", "lockout.max"},
	{"Lockout.Cooldown", "lockout.cooldown"}, {"Lockout", "lockout"},
	{"Rate", "rate"}, {"Period", "period"}, {"Burst", "burst"}, {"Algorithm", "algorithm"}, {"Name", "name"},
}

// coreError is err, core's refusal of the limit at node n, named by the
// field it is about: the first field its message names. When the limit
// did not give that field (core found fault with a default), the
// lockout it belongs to, or else the limit itself, is named.
func (w *walker) coreError(err error, n *yaml.Node, p path, at limitNodes) *Error {
	msg := trimCore(err)
	field := fieldOf(msg)
	if v := at[field]; v != nil {
		return w.errAt(v, p.key(field), "%s", msg)
	}
	if parent, _, ok := strings.Cut(field, "."); ok && at[parent] != nil {
		return w.errAt(at[parent], p.key(parent), "%s", msg)
	}
	return w.errAt(n, p, "%s", msg)
}

// fieldOf returns the policy field of the first core field msg names.
func fieldOf(msg string) string {
	for i := 0; i < len(msg); i++ {
		if i > 0 && isLetter(msg[i-1]) {
			continue
		}
		for _, f := range coreFields {
			end := i + len(f.core)
			if strings.HasPrefix(msg[i:], f.core) && (end == len(msg) || !isLetter(msg[end]) && msg[end] != '.') {
				return f.field
			}
		}
	}
	return ""
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// corePrefix is how core's validation errors begin: the package, and the
// limit's name, which the field path already says.
var corePrefix = regexp.MustCompile(`^(ratelimit: )?(limit "(?:[^"\\]|\\.)*": )?`)

// trimCore returns core's message without what the path already says.
func trimCore(err error) string {
	return corePrefix.ReplaceAllString(err.Error(), "")
}

// joinNames lists names for a message: "a, b and c".
func joinNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
