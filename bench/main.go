// Command bench runs ratelimit side by side with the Go rate limiters
// people use instead, on one Redis and in memory, and writes
// docs/benchmarks.md with its charts.
//
// It is a program rather than go test -bench because it interleaves the
// contenders of a family within each round and takes their ratios within
// a round; see the Method section of the report it writes.
//
//	make bench                 # from the repository root
//	go run . -quick            # from bench/: a smoke run
//	go run . -plan             # what would run, and for how long
//
// It lives in its own module so that the library's users never download
// the peers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	cfg, err := parseConfig(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		err = run(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	fams := selectedFamilies(cfg)
	var accuracy []contender
	if cfg.wants("accuracy") {
		accuracy = accuracyContenders()
	}
	fmt.Fprintf(os.Stderr, "bench: %d families, %d accuracy floods, planned about %s\n",
		len(fams), len(accuracy), cfg.plannedTime(fams, len(accuracy)).Round(time.Second))
	if cfg.plan {
		printPlan(cfg, fams)
		return nil
	}
	srv, err := openRedis()
	if err != nil {
		return err
	}
	defer srv.close()
	admin := srv.admin()
	defer admin.Close()

	ctx := context.Background()
	cr := &cellRunner{cfg: cfg, srv: srv, admin: admin}
	rep := &report{cfg: cfg, fams: fams, machine: describeMachine(ctx, srv, admin), versions: moduleVersions()}
	t0 := time.Now()
	for _, f := range fams {
		rep.runFamily(ctx, cr, f)
	}
	if len(accuracy) > 0 || anyRedis(fams) {
		fmt.Fprintln(os.Stderr, "key memory")
		rep.footprints = cr.runFootprints(ctx, footprintContenders())
		cr.flush(ctx)
	}
	if len(accuracy) > 0 {
		fmt.Fprintln(os.Stderr, "accuracy")
	}
	for _, c := range accuracy {
		rep.accuracy = append(rep.accuracy, cr.runAccuracy(c))
	}
	cr.flush(ctx)
	rep.machine.took, rep.machine.loadEnd = time.Since(t0), loadAvg()
	if err := rep.write(); err != nil {
		return fmt.Errorf("bench: write report: %w", err)
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s in %s\n", cfg.out, rep.machine.took.Round(time.Second))
	return nil
}

func selectedFamilies(cfg config) []*family {
	var out []*family
	for _, f := range families() {
		if cfg.wants(f.id) {
			out = append(out, f)
		}
	}
	return out
}

func anyRedis(fams []*family) bool {
	for _, f := range fams {
		if f.redis {
			return true
		}
	}
	return false
}

// runFamily runs every cell of f, printing each as it ends, and the
// redis-benchmark reference after each ceiling cell.
func (rep *report) runFamily(ctx context.Context, cr *cellRunner, f *family) {
	for _, cb := range rep.cfg.combosOf(f) {
		fmt.Fprintf(os.Stderr, "%s, %s\n", f.title, cb)
		c := cr.runCell(ctx, f, cb)
		rep.cells = append(rep.cells, c)
		printCell(c)
		if f.id == "ceiling" && rep.cfg.redisBenchmark {
			plain := c.row(ceiling().name).perSecond()
			rep.redisBench = append(rep.redisBench, runRedisBenchmark(ctx, cr.srv, cr.admin, cb.c, rep.cfg.duration, plain))
		}
	}
}

func printCell(c *cellResult) {
	for _, r := range c.rows {
		fmt.Fprintf(os.Stderr, "  %-40s %10s/s  %7s  p99 %-9s err %s\n", r.c.name, fmtRate(r.perSecond()),
			fmtRatio(r.ratioMedian()), fmtDur(r.p99()), fmtPct(r.errRate()))
	}
}

func printPlan(cfg config, fams []*family) {
	for _, f := range fams {
		fmt.Printf("%s (%d contenders, ratios against %s)\n", f.title, len(f.contenders), f.baseline)
		for _, cb := range cfg.combosOf(f) {
			fmt.Printf("  %s\n", cb)
		}
	}
	fmt.Printf("rounds %d × %s per contender, warm-up %s; accuracy floods %s each\n",
		cfg.rounds, cfg.duration, cfg.warmup, cfg.accuracyDuration)
}
