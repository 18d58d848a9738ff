package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The accuracy cell floods one client from several app nodes at once and
// counts what each limiter admitted, against the most its algorithm may
// admit in that time. A non-atomic read-then-write lets nodes race past
// the limit; counting denied requests as used lets fewer through.

const (
	accuracyNodes      = 4  // independent clients (pools and limiter objects): app nodes
	accuracyGoroutines = 64 // spread over the nodes
)

// accuracyQuota is 100 checks per second, burst 100.
var accuracyQuota = quota{rate: 100, period: time.Second}

// boundKind names how an algorithm's exact bound is computed.
type boundKind uint8

const (
	boundNone           boundKind = iota
	boundBucket                   // GCRA, token bucket: burst + rate·T
	boundEpochWindows             // fixed windows aligned to the epoch: rate per window touched
	boundFirstWindows             // fixed windows opened by the first request: rate·(⌊T/P⌋+1)
	boundLog                      // sliding log: no P-window above rate: rate·(⌊T/P⌋+1)
	boundSlidingCounter           // sliding counter: rate per window touched, the last pro rata
)

func (b boundKind) String() string {
	return [...]string{"—", "burst + rate·T", "rate × epoch windows touched", "rate × (⌊T/P⌋+1)",
		"rate × (⌊T/P⌋+1)", "rate × (windows − 1) + rate·elapsed share of the last"}[b]
}

// bound returns the most a limiter of kind b with quota q may admit to a
// flood between from, when the first admitted check was sent, and to,
// when the last check had returned. Both are client times, on the clock
// Redis reads too; the interval holds every admission, so the bound errs
// only on the generous side.
func (b boundKind) bound(q quota, from, to time.Time) float64 {
	rate, p := float64(q.rate), int64(q.period)
	elapsed := to.Sub(from)
	windows := float64(to.UnixNano()/p - from.UnixNano()/p + 1)
	switch b {
	case boundBucket:
		return rate + math.Floor(q.perSecond()*elapsed.Seconds())
	case boundEpochWindows:
		return rate * windows
	case boundFirstWindows, boundLog:
		return rate * (math.Floor(float64(elapsed)/float64(p)) + 1)
	case boundSlidingCounter:
		if windows == 1 {
			return rate
		}
		share := float64(to.UnixNano()%p) / float64(p)
		return rate*(windows-1) + math.Floor(rate*share)
	}
	return math.NaN()
}

type accuracyResult struct {
	c                        contender
	admitted, denied, errors int64
	bound                    float64
	elapsed                  time.Duration
	firstErr                 error
}

func (a accuracyResult) share() float64 { return ratio(float64(a.admitted), a.bound) }

// runAccuracy floods one key of c from accuracyNodes instances, whose
// pools are dialled first on another key (an app node's pool is warm). The
// flood lasts the configured time plus half a period, so that no window
// boundary falls at its very end, where a bound is least tight.
func (cr *cellRunner) runAccuracy(c contender) accuracyResult {
	res := accuracyResult{c: c}
	e := env{srv: cr.srv, pool: accuracyGoroutines / accuracyNodes, keys: 2, ns: cr.namespace(), q: accuracyQuota}
	insts := make([]*instance, accuracyNodes)
	defer closeAll(insts)
	for i := range insts {
		var err error
		if insts[i], err = c.open(e); err != nil { // same ns: the nodes share the client's keys
			res.firstErr = err
			return res
		}
	}
	for _, inst := range insts {
		warm(inst, e.pool, 1)
	}
	run := measure(nodes(insts), runSpec{goroutines: accuracyGoroutines, keys: 1, duration: cr.cfg.floodDuration()})
	res.admitted = run.checks - run.denied - run.errors
	res.denied, res.errors, res.firstErr, res.elapsed = run.denied, run.errors, run.firstErr, run.elapsed
	if !run.firstAllowed.IsZero() {
		res.bound = c.bound.bound(accuracyQuota, run.firstAllowed, run.start.Add(run.elapsed))
	}
	fmt.Fprintf(os.Stderr, "  %-30s admitted %5d of bound %5.0f  errors %d\n", c.name, res.admitted, res.bound, res.errors)
	return res
}

// warm makes a few checks of client key from n goroutines at once, so that
// inst's pool holds n connections.
func warm(inst *instance, n, key int) {
	var wg sync.WaitGroup
	for range n {
		check := inst.newWorker()
		wg.Go(func() {
			for range 3 {
				_, _ = check(context.Background(), key)
			}
		})
	}
	wg.Wait()
}

// floodDuration is how long an accuracy flood lasts.
func (c config) floodDuration() time.Duration {
	return c.accuracyDuration + accuracyQuota.period/2
}

// nodes is one instance whose workers take turns among insts, so the
// goroutines of a run are spread evenly over the app nodes.
func nodes(insts []*instance) *instance {
	var next atomic.Int64
	return &instance{close: func() {}, newWorker: func() checkFunc {
		return insts[int(next.Add(1)-1)%len(insts)].newWorker()
	}}
}

// runFootprints measures the Redis memory one client of each contender
// leaves after ten admitted checks under the accuracy quota.
func (cr *cellRunner) runFootprints(ctx context.Context, cs []contender) map[string]keyFootprint {
	out := map[string]keyFootprint{}
	for _, c := range cs {
		if _, done := out[c.name]; done || !c.redis {
			continue
		}
		f, err := cr.footprintOf(ctx, c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "  %s: footprint: %v\n", c.name, err)
		}
		out[c.name] = f
	}
	return out
}

func (cr *cellRunner) footprintOf(ctx context.Context, c contender) (keyFootprint, error) {
	e := env{srv: cr.srv, pool: 1, keys: 1, ns: cr.namespace(), q: accuracyQuota}
	inst, err := c.open(e)
	if err != nil {
		return keyFootprint{}, err
	}
	defer inst.close()
	check := inst.newWorker()
	for range 10 {
		if _, err := check(ctx, 0); err != nil {
			return keyFootprint{}, err
		}
	}
	return footprint(ctx, cr.admin, e.ns)
}
