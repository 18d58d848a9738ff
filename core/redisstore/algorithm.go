package redisstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ratelimitkit/ratelimit/core"
)

// An algorithm is the file scripts/<algorithm>.lua, the body of a take of
// one limit, cut where its charge starts (the layout is scripts/common.lua's).
// A one-limit program runs the file as it is; the program "take" runs it as
// two functions ([algorithm.functions]).
type algorithm struct {
	header string // the first paragraph, a comment
	decide string // the body up to its charge line
	args   string // the charge's arguments: "a, b" of "-- charge(a, b): ..."
	charge string // from the charge line to the last line, excluded
	admit  string // the last line, "return {1, 0, ...}": the reply of a charge
}

// chargeLine starts the line where an algorithm's charge starts.
const chargeLine = "-- charge("

// readAlgorithm reads and cuts the file of a.
func readAlgorithm(a core.Algorithm) (algorithm, error) {
	name := a.String() + ".lua"
	b, err := scriptFS.ReadFile("scripts/" + name)
	if err != nil {
		return algorithm{}, err
	}
	alg, err := parseAlgorithm(string(b))
	if err != nil {
		return algorithm{}, fmt.Errorf("%s: %w", name, err)
	}
	return alg, nil
}

// parseAlgorithm cuts the text of an algorithm file. It fails unless the
// text starts with a paragraph of its own, has one charge line and ends
// with the reply of an admitted take after it.
func parseAlgorithm(text string) (algorithm, error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	last := len(lines) - 1
	if !strings.HasPrefix(lines[last], "return {1, 0, ") || !strings.HasSuffix(lines[last], "}") {
		return algorithm{}, fmt.Errorf("last line %q is not the reply of an admitted take, return {1, 0, ...}", lines[last])
	}
	at := -1
	for i, l := range lines {
		if !strings.HasPrefix(l, chargeLine) {
			continue
		}
		if at >= 0 {
			return algorithm{}, fmt.Errorf("two charge lines, %d and %d", at+1, i+1)
		}
		at = i
	}
	args, _, ok := strings.Cut(strings.TrimPrefix(lines[max(at, 0)], chargeLine), ")")
	if at < 0 || !ok || strings.TrimSpace(args) == "" {
		return algorithm{}, fmt.Errorf("no line %sa, b, ...): where the charge starts", chargeLine)
	}
	top := slices.Index(lines, "") // the header is the first paragraph
	if top < 0 || top > at {
		return algorithm{}, errors.New("no header: a comment, then an empty line")
	}
	return algorithm{
		header: strings.Join(lines[:top], "\n"),
		decide: strings.Join(lines[top+1:at], "\n"),
		args:   args,
		charge: strings.Join(lines[at:last], "\n"),
		admit:  lines[last],
	}, nil
}

// functions returns the algorithm as the program "take" defines it, for
// the algorithm name: its header, then charge_<name>(key, args...), which
// charges, then <name>(key, now, cost, rate, period, capacity, lease),
// which returns the reply of the take and, when that admits with cost > 0,
// charge_<name> and its arguments, instead of charging.
func (alg algorithm) functions(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nlocal function charge_%s(key, %s)\n", alg.header, name, alg.args)
	indent(&b, alg.charge)
	fmt.Fprintf(&b, "end\n\nlocal function %s(key, now, cost, rate, period, capacity, lease)\n", name)
	indent(&b, alg.decide)
	indent(&b, fmt.Sprintf("%s, charge_%s, %s", alg.admit, name, alg.args))
	b.WriteString("end\n")
	return b.String()
}

// indent writes the lines of text to b, each but the empty ones indented
// by two spaces, each followed by a newline.
func indent(b *strings.Builder, text string) {
	for _, l := range strings.Split(text, "\n") {
		if l != "" {
			b.WriteString("  ")
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
}
