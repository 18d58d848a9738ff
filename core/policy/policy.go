package policy

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// A Policy is the tiers of one or more limiters, read from a document by
// [Parse] or [Load] and valid throughout. It is immutable and safe for
// concurrent use.
type Policy struct {
	file     string
	limiters []*limiterPolicy // in document order
}

// Load reads and parses the policy file at name ([Parse]).
func Load(name string) (*Policy, error) {
	data, err := readFile(name)
	if err != nil {
		return nil, err
	}
	return Parse(name, data)
}

// readFile reads the file name, up to one byte more than [MaxSize], so that
// Parse can refuse a larger one without reading it all.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: policy: read %s: %w", name, err)
	}
	return data, nil
}

// File returns the name the policy was parsed under.
func (p *Policy) File() string { return p.file }

// Limiters returns the names of the limiters the policy describes, in
// the document's order. A document of one limiter, without limiters
// (top-level default_tier and tiers), describes one limiter named "".
func (p *Policy) Limiters() []string {
	names := make([]string, len(p.limiters))
	for i, l := range p.limiters {
		names[i] = l.name
	}
	return names
}

// Limiter returns the tiers of the limiter name, in the document's order,
// and its default tier (the first, when the document names none), as
// [core.Limiter.SetTiers] takes them; ok is false when the policy does not
// describe that limiter. The tiers are the caller's to keep.
func (p *Policy) Limiter(name string) (tiers []core.Tier, def string, ok bool) {
	l := p.limiter(name)
	if l == nil {
		return nil, "", false
	}
	return cloneTiers(l.tiers), l.def, true
}

func (p *Policy) limiter(name string) *limiterPolicy {
	for _, l := range p.limiters {
		if l.name == name {
			return l
		}
	}
	return nil
}

func cloneTiers(tiers []core.Tier) []core.Tier {
	out := make([]core.Tier, len(tiers))
	for i, t := range tiers {
		out[i] = core.Tier{Name: t.Name, Limits: slices.Clone(t.Limits)}
	}
	return out
}

// Summary describes the policy for a person: per limiter, its tiers (the
// default marked) and each limit on a line.
func (p *Policy) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: version %d, %s\n", p.file, Version, plural(len(p.limiters), "limiter"))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, l := range p.limiters {
		fmt.Fprintf(tw, "%s\n", limiterTitle(l.name))
		for _, t := range l.tiers {
			tier := "  tier " + t.Name
			if t.Name == l.def {
				tier += " (default)"
			}
			for _, lim := range t.Limits {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", tier, lim.EffectiveName(), describeLimit(lim))
				tier = ""
			}
		}
	}
	tw.Flush()
	return b.String()
}

// limiterTitle names a limiter in a report.
func limiterTitle(name string) string {
	if name == "" {
		return "limiter (the document's one)"
	}
	return "limiter " + name
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// describeLimit says what l admits: "10 per 1s, burst 100, gcra".
func describeLimit(l core.Limit) string {
	var s string
	switch l.Algorithm {
	case core.Concurrency:
		s = fmt.Sprintf("%d in flight, lease TTL %s", l.Rate, shortDuration(l.Period))
	case core.CalendarWindow:
		s = fmt.Sprintf("%d per calendar %s in %s", l.Rate, l.Calendar.Unit, l.Calendar.Location)
	default:
		s = fmt.Sprintf("%d per %s", l.Rate, shortDuration(l.Period))
		if l.Burst != 0 && l.Burst != l.Rate {
			s += fmt.Sprintf(", burst %d", l.Burst)
		}
		s += ", " + l.Algorithm.String()
	}
	if lo := l.Lockout; lo != (core.Lockout{}) {
		s += fmt.Sprintf("; lockout after %d within %s for %s", lo.After, shortDuration(lo.Within), shortDuration(lo.For))
	}
	return s
}

// shortDuration writes d without its zero trailing units: "24h", "1m",
// "1h30m", "1.5s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
