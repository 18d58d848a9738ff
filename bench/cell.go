package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// A cell is one family under one combo: every contender runs once per
// round for the same duration, in an order rotated each round, so slow
// drift of the shared machine (other jobs, thermal state) hits all of them
// alike. Ratios are taken between runs of the same round, then medianed.

// roundSample is one contender's run in one round.
type roundSample struct {
	run      runResult
	server   serverCost // zero unless the family is on Redis
	dbMicros float64    // PostgreSQL CPU µs per check; zero unless the family is on PostgreSQL
}

// row is one contender's results in a cell.
type row struct {
	c       contender
	samples []roundSample
	ratio   []float64 // per round, checks/s over the baseline's
	ceil    []float64 // per round, over the ceiling's (Redis families)
	openErr error
}

type cellResult struct {
	fam   *family
	combo combo
	rows  []*row
}

// cellRunner runs cells on one server with one configuration.
type cellRunner struct {
	cfg   config
	srv   *redisServer
	admin *redis.Client
	seq   int // makes every instance's namespace unique
}

// namespace returns a fresh key namespace: the run id keeps runs against a
// shared REDIS_URL server apart, the sequence number instances.
func (cr *cellRunner) namespace() string {
	cr.seq++
	return fmt.Sprintf("rlb%s-%dz", cr.cfg.runID, cr.seq)
}

func (cr *cellRunner) runCell(ctx context.Context, fam *family, cb combo) *cellResult {
	res := &cellResult{fam: fam, combo: cb}
	insts := cr.openAll(res, cb)
	defer closeAll(insts)
	spec := runSpec{goroutines: cb.c, keys: cb.keys, duration: cr.cfg.warmup, sampleShift: fam.sampleShift}
	for _, inst := range insts {
		if inst != nil {
			measure(inst, spec) // dials the pool, loads the script, creates the keys
		}
	}
	spec.duration = cr.cfg.duration
	for round := range cr.cfg.rounds {
		for _, i := range rotated(len(insts), round) {
			if insts[i] != nil {
				res.rows[i].samples = append(res.rows[i].samples, cr.runOnce(ctx, fam, insts[i], spec))
			}
		}
	}
	res.computeRatios()
	cr.flush(ctx)
	return res
}

// openAll opens every contender of the cell, each in its own namespace,
// and adds its row; a contender that fails to open keeps an empty row.
func (cr *cellRunner) openAll(res *cellResult, cb combo) []*instance {
	insts := make([]*instance, len(res.fam.contenders))
	for i, c := range res.fam.contenders {
		r := &row{c: c}
		res.rows = append(res.rows, r)
		e := env{srv: cr.srv, pool: max(cb.c, 10), keys: cb.keys, ns: cr.namespace(), q: res.fam.quota}
		if insts[i], r.openErr = c.open(e); r.openErr != nil {
			fmt.Fprintf(os.Stderr, "  %s: open: %v\n", c.name, r.openErr)
		}
	}
	return insts
}

// runOnce is one measured run, bracketed by INFO on Redis families.
func (cr *cellRunner) runOnce(ctx context.Context, fam *family, inst *instance, spec runSpec) roundSample {
	var before infoSnapshot
	var infoErr error
	if fam.redis {
		before, infoErr = takeInfo(ctx, cr.admin)
	}
	dbBefore, dbOK := postgresCPU()
	s := roundSample{run: measure(inst, spec)}
	if dbAfter, ok := postgresCPU(); fam.postgres && dbOK && ok && s.run.checks > 0 {
		s.dbMicros = float64((dbAfter - dbBefore).Microseconds()) / float64(s.run.checks)
	}
	if fam.redis && infoErr == nil {
		if after, err := takeInfo(ctx, cr.admin); err == nil {
			s.server = costSince(before, after, s.run.checks)
		}
	}
	return s
}

// rotated returns 0..n-1 starting at round mod n.
func rotated(n, round int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (i + round) % n
	}
	return order
}

// flush empties a server this program started, so a cell neither pays
// for the keys of the previous ones nor finds their state.
func (cr *cellRunner) flush(ctx context.Context) {
	if cr.srv.started {
		_ = cr.admin.FlushAll(ctx).Err()
	}
}

func closeAll(insts []*instance) {
	for _, inst := range insts {
		if inst != nil {
			inst.close()
		}
	}
}

// computeRatios divides each round's checks/s by the baseline's and the
// ceiling's of the same round.
func (res *cellResult) computeRatios() {
	base := res.row(res.fam.baseline)
	ceil := res.row(ceiling().name)
	for _, r := range res.rows {
		r.ratio = perRoundRatio(r, base)
		r.ceil = perRoundRatio(r, ceil)
	}
}

func perRoundRatio(r, base *row) []float64 {
	if base == nil {
		return nil
	}
	out := make([]float64, min(len(r.samples), len(base.samples)))
	for i := range out {
		out[i] = ratio(r.samples[i].run.perSecond(), base.samples[i].run.perSecond())
	}
	return out
}

// row returns the row of the named contender, nil if absent.
func (res *cellResult) row(name string) *row {
	for _, r := range res.rows {
		if r.c.name == name {
			return r
		}
	}
	return nil
}

// The medians a table shows.

func (r *row) perSecond() float64 {
	return medianOf(r.samples, func(s roundSample) float64 { return s.run.perSecond() })
}
func (r *row) ratioMedian() float64 { return median(r.ratio) }
func (r *row) ceilMedian() float64  { return median(r.ceil) }
func (r *row) p50() time.Duration {
	return time.Duration(medianOf(r.samples, func(s roundSample) float64 { return float64(s.run.latency.quantile(0.50)) }))
}
func (r *row) p99() time.Duration {
	return time.Duration(medianOf(r.samples, func(s roundSample) float64 { return float64(s.run.latency.quantile(0.99)) }))
}
func (r *row) clientMicros() float64 {
	return medianOf(r.samples, func(s roundSample) float64 { return s.run.clientMicros() })
}
func (r *row) serverMicros() float64 {
	return medianOf(r.samples, func(s roundSample) float64 { return s.server.cpuMicros })
}
func (r *row) dbMicros() float64 {
	return medianOf(r.samples, func(s roundSample) float64 { return s.dbMicros })
}
func (r *row) commands() float64 {
	return medianOf(r.samples, func(s roundSample) float64 { return s.server.commands })
}
func (r *row) inputBytes() float64 {
	return medianOf(r.samples, func(s roundSample) float64 { return s.server.inputBytes })
}

// fraction returns the share of checks f counts, over all rounds.
func (r *row) fraction(f func(runResult) int64) float64 {
	var n, total int64
	for _, s := range r.samples {
		n += f(s.run)
		total += s.run.checks
	}
	if total == 0 {
		return math.NaN()
	}
	return float64(n) / float64(total)
}

func (r *row) errRate() float64 { return r.fraction(func(x runResult) int64 { return x.errors }) }
func (r *row) denyRate() float64 {
	return r.fraction(func(x runResult) int64 { return x.denied })
}

// firstErr is the first error any round saw.
func (r *row) firstErr() error {
	if r.openErr != nil {
		return r.openErr
	}
	for _, s := range r.samples {
		if s.run.firstErr != nil {
			return s.run.firstErr
		}
	}
	return nil
}

// mix is the command mix of the last round.
func (r *row) mix() string {
	if len(r.samples) == 0 {
		return ""
	}
	return mixString(r.samples[len(r.samples)-1].server.mix)
}
