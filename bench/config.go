package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	quick            bool
	duration         time.Duration
	rounds           int
	warmup           time.Duration
	accuracyDuration time.Duration
	only             map[string]bool // family ids (and "accuracy"); empty means all
	combos           []combo         // overrides every family's combos
	out              string
	redisBenchmark   bool
	plan             bool
	runID            string
}

// The defaults fit the whole run in about 8 minutes on a 2-core machine
// (see plannedTime); -quick is a smoke run of well under a minute.
const (
	defaultDuration = time.Second
	defaultRounds   = 3
	defaultWarmup   = 200 * time.Millisecond
	defaultAccuracy = 3 * time.Second
)

func parseConfig(args []string) (config, error) {
	var c config
	var only, combos string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.BoolVar(&c.quick, "quick", false, "smoke run: short runs, 2 rounds, one combo (c=16, 10k keys) per family")
	fs.DurationVar(&c.duration, "d", 0, "duration of one contender's run in one round (default 1s, quick 200ms)")
	fs.IntVar(&c.rounds, "rounds", 0, "rounds per cell (default 3, quick 2)")
	fs.DurationVar(&c.warmup, "warmup", 0, "unmeasured run of each contender before a cell's rounds (default 200ms, quick 50ms)")
	fs.DurationVar(&c.accuracyDuration, "accuracy-d", 0, "duration of each accuracy flood (default 3s, quick 1s)")
	fs.StringVar(&only, "families", "", "comma-separated families to run (default all): "+strings.Join(familyIDs(), ","))
	fs.StringVar(&combos, "combos", "", `load shapes for every family instead of its own, e.g. "16x10000,64x1" (goroutines x keys)`)
	fs.StringVar(&c.out, "out", "", "report path (default docs/benchmarks.md of the repository); charts go to bench/ beside it")
	fs.BoolVar(&c.redisBenchmark, "redis-benchmark", true, "also run redis-benchmark for the ceiling, when it is installed")
	fs.BoolVar(&c.plan, "plan", false, "print the cells and the planned time, run nothing")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.applyDefaults()
	var err error
	if c.only, err = parseOnly(only); err != nil {
		return c, err
	}
	if c.combos, err = parseCombos(combos); err != nil {
		return c, err
	}
	if c.combos == nil && c.quick {
		c.combos = quickCombos
	}
	if c.out == "" {
		c.out, err = defaultOut()
	}
	c.runID = strconv.FormatInt(time.Now().Unix()%1_000_000, 36)
	return c, err
}

func (c *config) applyDefaults() {
	pick := func(d *time.Duration, full, quick time.Duration) {
		if *d == 0 {
			*d = full
			if c.quick {
				*d = quick
			}
		}
	}
	pick(&c.duration, defaultDuration, 200*time.Millisecond)
	pick(&c.warmup, defaultWarmup, 50*time.Millisecond)
	pick(&c.accuracyDuration, defaultAccuracy, time.Second)
	if c.rounds == 0 {
		c.rounds = defaultRounds
		if c.quick {
			c.rounds = 2
		}
	}
}

func familyIDs() []string {
	var ids []string
	for _, f := range families() {
		ids = append(ids, f.id)
	}
	return append(ids, "accuracy")
}

func parseOnly(s string) (map[string]bool, error) {
	only := map[string]bool{}
	known := strings.Join(familyIDs(), ",")
	for id := range strings.SplitSeq(s, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		if !strings.Contains(","+known+",", ","+id+",") {
			return nil, fmt.Errorf("bench: unknown family %q (have %s)", id, known)
		}
		only[id] = true
	}
	return only, nil
}

// parseCombos reads "16x10000,64x1".
func parseCombos(s string) ([]combo, error) {
	var out []combo
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		cs, ks, ok := strings.Cut(part, "x")
		c, err1 := strconv.Atoi(cs)
		k, err2 := strconv.Atoi(ks)
		if !ok || err1 != nil || err2 != nil || c < 1 || k < 1 {
			return nil, fmt.Errorf("bench: combo %q: want GOROUTINESxKEYS, e.g. 64x10000", part)
		}
		out = append(out, combo{c, k})
	}
	return out, nil
}

// wants reports whether family id runs.
func (c config) wants(id string) bool { return len(c.only) == 0 || c.only[id] }

// combosOf returns the combos f runs with.
func (c config) combosOf(f *family) []combo {
	if c.combos != nil {
		return c.combos
	}
	return f.combos
}

// defaultOut is docs/benchmarks.md in the repository that holds the
// working directory (bench/ or the root).
func defaultOut() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
			strings.Contains(string(data), "module github.com/ratelimitkit/ratelimit\n") {
			return filepath.Join(d, "docs", "benchmarks.md"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("bench: no ratelimit repository above %s: pass -out", dir)
		}
	}
}

// plannedTime estimates a run: every run and warm-up, the accuracy floods,
// and a second per cell for opening, flushing and INFO.
func (c config) plannedTime(fams []*family, accuracyRuns int) time.Duration {
	var t time.Duration
	for _, f := range fams {
		n := time.Duration(len(f.contenders) * len(c.combosOf(f)))
		t += n*(time.Duration(c.rounds)*c.duration+c.warmup) + time.Duration(len(c.combosOf(f)))*time.Second
	}
	return t + time.Duration(accuracyRuns)*(c.floodDuration()+300*time.Millisecond)
}
