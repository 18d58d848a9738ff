package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The "Reading" section: plain sentences computed from the tables, so the
// prose never disagrees with the numbers, and a peer that wins a cell is
// named as such.

func (rep *report) reading() []string {
	var out []string
	if rep.cfg.quick {
		out = append(out, "This is a `-quick` smoke run (short runs, two rounds): the sentences below describe its numbers, which are too noisy to compare contenders by.")
	}
	out = append(out, rep.readLoad()...)
	out = append(out, rep.readCeiling()...)
	for _, id := range []string{"gcra", "fixed", "sliding"} {
		out = append(out, rep.readPeerFamily(id)...)
	}
	out = append(out, rep.readAutoPipeline()...)
	out = append(out, rep.readOwnFamily("algorithms")...)
	out = append(out, rep.readOwnFamily("path-redis")...)
	out = append(out, rep.readMemory()...)
	out = append(out, rep.readServerCost()...)
	out = append(out, rep.readFootprints()...)
	out = append(out, rep.readAccuracy()...)
	return append(out, rep.readFailures()...)
}

// roundRatio is the median over rounds of a's checks/s over b's.
func roundRatio(a, b *row) float64 {
	return median(perRoundRatio(a, b))
}

// span renders the range of xs as "0.91×" or "0.91–1.40×".
func span(xs []float64, format func(float64) string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if !math.IsNaN(x) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	switch {
	case math.IsInf(lo, 1):
		return "—"
	case format(lo) == format(hi):
		return format(lo)
	}
	return strings.TrimSuffix(format(lo), "×") + "–" + format(hi)
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// oursRow is the first of our rows in a cell.
func oursRow(c *cellResult) *row {
	for _, r := range c.rows {
		if r.c.ours && len(r.samples) > 0 {
			return r
		}
	}
	return nil
}

// peerRows are the rows that are neither ours nor the ceiling.
func peerRows(c *cellResult) []*row {
	var out []*row
	for _, r := range c.rows {
		if !r.c.ours && !strings.HasPrefix(r.c.name, "ceiling") && len(r.samples) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func (rep *report) readLoad() []string {
	m := rep.machine
	f := strings.Fields(m.loadStart)
	if len(f) == 0 {
		return nil
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil || load < float64(m.cpus)/2 {
		return nil
	}
	return []string{fmt.Sprintf("The 1-minute load average was %.1f on %d CPUs when the run started: other work shared the machine, so absolute numbers are low and noisy; the within-round ratios are the steadier reading.", load, m.cpus)}
}

func (rep *report) readCeiling() []string {
	var ratios []float64
	var shapes []string
	for _, c := range rep.cellsOf("ceiling") {
		plain, ap := c.row(ceiling().name), c.row(ceilingAutoPipeline().name)
		if plain == nil || ap == nil {
			continue
		}
		ratios = append(ratios, roundRatio(ap, plain))
		shapes = append(shapes, fmt.Sprintf("%s at c=%d", fmtRatio(roundRatio(ap, plain)), c.combo.c))
	}
	var out []string
	if len(ratios) > 0 {
		out = append(out, fmt.Sprintf("Through the AutoPipeliner the EVALSHA ceiling was %s the plain client's checks/s (%s).",
			span(ratios, fmtRatio), strings.Join(shapes, ", ")))
	}
	for _, rb := range rep.redisBench {
		if rb.err != nil {
			continue
		}
		for _, c := range rep.cellsOf("ceiling") {
			if plain := c.row(ceiling().name); plain != nil && c.combo.c == rb.c {
				out = append(out, fmt.Sprintf("With %d connections redis-benchmark sent %s EVALSHA/s against go-redis's %s/s: %s.",
					rb.c, fmtRate(rb.perSecond), fmtRate(plain.perSecond()), fmtRatio(ratio(plain.perSecond(), rb.perSecond))+" of the C client"))
			}
		}
	}
	return out
}

// readPeerFamily compares our row with each peer, over the family's cells,
// and names every cell a peer won.
func (rep *report) readPeerFamily(id string) []string {
	cells := rep.cellsOf(id)
	if len(cells) == 0 {
		return nil
	}
	var out []string
	ours := oursRow(cells[0])
	if ours == nil {
		return nil
	}
	for _, peer := range peerRows(cells[0]) {
		var ratios []float64
		var wins []string
		for _, c := range cells {
			o, p := c.row(ours.c.name), c.row(peer.c.name)
			r := roundRatio(o, p)
			ratios = append(ratios, r)
			if r < 1 {
				wins = append(wins, fmt.Sprintf("%s was faster than %s at %s: %s/s against %s/s (ours %s).",
					peer.c.name, ours.c.name, c.combo, fmtRate(p.perSecond()), fmtRate(o.perSecond()), fmtRatio(r)))
			}
		}
		out = append(out, fmt.Sprintf("%s: %s ran %s the checks/s of %s over %s.",
			cells[0].fam.title, ours.c.name, span(ratios, fmtRatio), peer.c.name, plural(len(cells), "load shape")))
		out = append(out, wins...)
	}
	var shares []float64
	for _, c := range cells {
		shares = append(shares, c.row(ours.c.name).ceilMedian())
	}
	if !math.IsNaN(median(shares)) {
		out = append(out, fmt.Sprintf("%s reached %s of the EVALSHA ceiling measured in the same rounds.", ours.c.name, span(shares, pct)))
	}
	return append(out, rep.readDefault(cells)...)
}

// defaultSuffix ends the name of our contender built as redisstore.New
// builds a store by default.
const defaultSuffix = ", batched (default)"

// readDefault compares our default store of a peer family, when it runs,
// with the family's baseline and the ceiling: what a user gets without
// options.
func (rep *report) readDefault(cells []*cellResult) []string {
	var def *row
	for _, r := range cells[0].rows {
		if r.c.ours && strings.HasSuffix(r.c.name, defaultSuffix) && len(r.samples) > 0 {
			def = r
		}
	}
	base := cells[0].fam.baseline
	if def == nil || cells[0].row(base) == nil {
		return nil
	}
	var ratios, shares []float64
	for _, c := range cells {
		ratios = append(ratios, roundRatio(c.row(def.c.name), c.row(base)))
		shares = append(shares, c.row(def.c.name).ceilMedian())
	}
	out := []string{fmt.Sprintf("%s: %s ran %s the checks/s of %s over %s.",
		cells[0].fam.title, def.c.name, span(ratios, fmtRatio), base, plural(len(cells), "load shape"))}
	if !math.IsNaN(median(shares)) {
		out = append(out, fmt.Sprintf("%s reached %s of the EVALSHA ceiling measured in the same rounds.", def.c.name, span(shares, pct)))
	}
	return out
}

func (rep *report) readAutoPipeline() []string {
	var parts []string
	var ratios []float64
	for _, c := range rep.cellsOf("gcra") {
		plain, ap := c.row("ratelimit gcra"), c.row(oursAutoPipeline().name)
		if plain == nil || ap == nil || len(ap.samples) == 0 {
			continue
		}
		r := roundRatio(ap, plain)
		ratios = append(ratios, r)
		parts = append(parts, fmt.Sprintf("%s at %s", fmtRatio(r), c.combo))
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Through the AutoPipeliner our GCRA store ran %s the plain client's checks/s (%s).",
		span(ratios, fmtRatio), strings.Join(parts, "; "))}
}

// readOwnFamily reports each row against the baseline for families of
// our own contenders only, and what each adds per check at c=1.
func (rep *report) readOwnFamily(id string) []string {
	cells := rep.cellsOf(id)
	if len(cells) == 0 {
		return nil
	}
	f := cells[0].fam
	var out []string
	for _, ct := range f.contenders {
		if ct.name == f.baseline {
			continue
		}
		var ratios []float64
		for _, c := range cells {
			ratios = append(ratios, c.row(ct.name).ratioMedian())
		}
		s := fmt.Sprintf("%s: %s ran %s the checks/s of %s", f.title, ct.name, span(ratios, fmtRatio), f.baseline)
		if added, ok := addedAtOne(cells, ct.name, f.baseline); ok {
			s += fmt.Sprintf("; at c=1 it added %s per check", fmtSigned(added))
		}
		out = append(out, s+".")
	}
	return out
}

// addedAtOne is the extra time per check of name over base in the cell
// with one goroutine, where time per check is the inverse of checks/s.
func addedAtOne(cells []*cellResult, name, base string) (d time.Duration, ok bool) {
	for _, c := range cells {
		if c.combo.c != 1 || c.combo.keys == 1 {
			continue
		}
		a, b := c.row(name).perSecond(), c.row(base).perSecond()
		if a > 0 && b > 0 {
			return time.Duration(1e9/a - 1e9/b), true
		}
	}
	return 0, false
}

func (rep *report) readMemory() []string {
	var out []string
	for _, c := range rep.cellsOf("memory") {
		base := c.row(c.fam.baseline)
		if base == nil || len(base.samples) == 0 {
			continue
		}
		var faster []string
		for _, r := range c.rows {
			if r.c.ours || len(r.samples) == 0 {
				continue
			}
			if x := roundRatio(r, base); x > 1 {
				faster = append(faster, fmt.Sprintf("%s (%s/s, %s)", r.c.name, fmtRate(r.perSecond()), fmtRatio(x)))
			}
		}
		s := fmt.Sprintf("In memory at %s, ratelimit memstore ran %s/s", c.combo, fmtRate(base.perSecond()))
		if len(faster) == 0 {
			s += ", ahead of every in-memory peer."
		} else {
			s += "; faster: " + strings.Join(faster, ", ") + "."
		}
		out = append(out, s)
	}
	return append(out, rep.readOwnMemoryPaths()...)
}

// readOwnMemoryPaths reports our Limiter and middleware over the memstore.
func (rep *report) readOwnMemoryPaths() []string {
	cells := rep.cellsOf("memory")
	var out []string
	for _, name := range []string{"Limiter.Allow (memstore)", "ratelimithttp (memstore)"} {
		var ratios []float64
		for _, c := range cells {
			if r := c.row(name); r != nil {
				ratios = append(ratios, r.ratioMedian())
			}
		}
		if len(ratios) == 0 {
			continue
		}
		s := fmt.Sprintf("%s ran %s the checks/s of the bare memstore", name, span(ratios, fmtRatio))
		if d, ok := addedAtOne(cells, name, "ratelimit memstore"); ok {
			s += fmt.Sprintf("; at c=1 it added %s per check", fmtSigned(d))
		}
		out = append(out, s+".")
	}
	return out
}

// readServerCost compares Redis CPU, commands and bytes per check at the
// busiest cell of each peer family.
func (rep *report) readServerCost() []string {
	var out []string
	for _, id := range []string{"gcra", "fixed", "sliding"} {
		c := busiestCell(rep.cellsOf(id))
		if c == nil {
			continue
		}
		var cpu, cmds []string
		for _, r := range c.rows {
			if len(r.samples) == 0 || strings.HasPrefix(r.c.name, "ceiling") {
				continue
			}
			cpu = append(cpu, fmt.Sprintf("%s %s µs", r.c.name, fmtNum(r.serverMicros())))
			cmds = append(cmds, fmt.Sprintf("%s %s commands and %s request bytes (%s)", r.c.name,
				fmtNum(r.commands()), fmtNum(r.inputBytes()), r.mix()))
		}
		out = append(out, fmt.Sprintf("%s, %s, Redis CPU per check: %s.", c.fam.title, c.combo, strings.Join(cpu, "; ")),
			fmt.Sprintf("%s, %s, per check: %s.", c.fam.title, c.combo, strings.Join(cmds, "; ")))
	}
	return out
}

func (rep *report) readFootprints() []string {
	var parts []string
	for _, a := range accuracyContenders() {
		if fp, ok := rep.footprints[a.name]; ok && fp.measured {
			s := fmt.Sprintf("%s %d B in %d key(s)", a.name, fp.bytes, fp.keys)
			if fp.noTTL > 0 {
				s += fmt.Sprintf(", %d without TTL", fp.noTTL)
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{"Redis memory of one client after 10 checks: " + strings.Join(parts, "; ") + "."}
}

func (rep *report) readAccuracy() []string {
	var out, exact []string
	for _, a := range rep.accuracy {
		share := a.share()
		switch {
		case a.firstErr != nil && a.admitted == 0:
			out = append(out, fmt.Sprintf("%s admitted nothing in the accuracy flood (error: %s).", a.c.name, truncate(a.firstErr.Error(), 120)))
		case share > 1.005:
			out = append(out, fmt.Sprintf("%s admitted %d where its algorithm allows at most %.0f (%s): the %d app nodes together exceeded the limit.",
				a.c.name, a.admitted, a.bound, fmtPct(share), accuracyNodes))
		case share < 0.9:
			out = append(out, fmt.Sprintf("%s admitted %d of the %.0f its algorithm allows (%s).", a.c.name, a.admitted, a.bound, fmtPct(share)))
		default:
			exact = append(exact, fmt.Sprintf("%s %s", a.c.name, fmtPct(share)))
		}
		if a.errors > 0 && a.firstErr != nil {
			out = append(out, fmt.Sprintf("%s returned %d errors in the accuracy flood (first: `%s`).", a.c.name, a.errors, truncate(a.firstErr.Error(), 120)))
		}
	}
	if len(exact) > 0 {
		out = append([]string{"Within 90–100.5% of their exact bound in the accuracy flood: " + strings.Join(exact, ", ") + "."}, out...)
	}
	return out
}

// readFailures names every throughput row that failed or denied checks.
func (rep *report) readFailures() []string {
	var out []string
	for _, c := range rep.cells {
		for _, r := range c.rows {
			if r.openErr != nil {
				out = append(out, fmt.Sprintf("%s could not be set up for %s, %s: %s.", r.c.name, c.fam.title, c.combo, truncate(r.openErr.Error(), 120)))
				continue
			}
			if e := r.errRate(); e > 0.001 {
				out = append(out, fmt.Sprintf("%s failed %s of its checks in %s, %s (first error: `%s`).",
					r.c.name, fmtPct(e), c.fam.title, c.combo, truncate(r.firstErr().Error(), 120)))
			}
			if d := r.denyRate(); d > 0.001 {
				out = append(out, fmt.Sprintf("%s denied %s of its checks in %s, %s, under a quota that admits all of them.",
					r.c.name, fmtPct(d), c.fam.title, c.combo))
			}
		}
	}
	return out
}

// plural writes "1 load shape", "5 load shapes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
