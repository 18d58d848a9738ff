package main

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A checkFunc makes one rate-limit check of the client with index key and
// reports whether it was admitted. Each worker goroutine has its own, so
// per-worker buffers need no locking.
type checkFunc func(ctx context.Context, key int) (allowed bool, err error)

// An instance is one contender set up for one cell: its clients, pools and
// limiters, like one app node. newWorker is called once per goroutine,
// before the clock starts.
type instance struct {
	newWorker func() checkFunc
	close     func()
}

// runSpec says how to drive an instance for one run.
type runSpec struct {
	goroutines int
	keys       int           // clients: 1 is one hot key
	duration   time.Duration //
	// sampleShift: every 1<<sampleShift-th check is timed. In-memory checks
	// take tens of nanoseconds, about what reading the clock twice costs,
	// so they are sampled; Redis checks are all timed.
	sampleShift uint
}

// runResult is what one run measured on the client side.
type runResult struct {
	checks, denied, errors int64
	start                  time.Time
	elapsed                time.Duration
	latency                histogram
	cpu                    time.Duration // this process's user + system time
	firstAllowed           time.Time     // when the first admitted check was sent (timed checks only)
	firstErr               error
}

func (r runResult) perSecond() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.checks) / r.elapsed.Seconds()
}

// clientMicros is this process's CPU time per check.
func (r runResult) clientMicros() float64 {
	if r.checks == 0 {
		return 0
	}
	return float64(r.cpu.Microseconds()) / float64(r.checks)
}

// workerTally is one goroutine's counts, merged after the run.
type workerTally struct {
	checks, denied, errors int64
	latency                histogram
	firstAllowed           time.Time
	firstErr               error
}

// measure runs spec.goroutines workers of inst for spec.duration, all
// released at once, and returns what they did. Elapsed time runs until the
// last worker has returned, so checks in flight at the deadline count and
// their time too.
func measure(inst *instance, spec runSpec) runResult {
	tallies := make([]workerTally, spec.goroutines)
	checks := make([]checkFunc, spec.goroutines)
	for g := range checks {
		checks[g] = inst.newWorker()
	}
	var stop atomic.Bool
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range spec.goroutines {
		wg.Go(func() {
			<-start
			work(checks[g], &tallies[g], g, spec, &stop)
		})
	}
	cpu0 := processCPU()
	t0 := time.Now()
	close(start)
	time.Sleep(spec.duration)
	stop.Store(true)
	wg.Wait()
	res := runResult{start: t0, elapsed: time.Since(t0), cpu: processCPU() - cpu0}
	for i := range tallies {
		res.add(&tallies[i])
	}
	return res
}

// work is one goroutine's loop. Goroutine g starts at a different client
// (7919 is prime) so the goroutines spread over the keys.
func work(check checkFunc, t *workerTally, g int, spec runSpec, stop *atomic.Bool) {
	ctx := context.Background()
	mask := int64(1)<<spec.sampleShift - 1
	k := (g * 7919) % spec.keys
	for i := int64(0); !stop.Load(); i++ {
		timed := i&mask == 0
		var t0 time.Time
		if timed {
			t0 = time.Now()
		}
		allowed, err := check(ctx, k)
		if timed {
			t.latency.record(time.Since(t0))
		}
		t.checks++
		switch {
		case err != nil:
			t.errors++
			if t.firstErr == nil {
				t.firstErr = err
			}
		case !allowed:
			t.denied++
		case timed && t.firstAllowed.IsZero():
			t.firstAllowed = t0
		}
		if k++; k == spec.keys {
			k = 0
		}
	}
}

func (r *runResult) add(t *workerTally) {
	r.checks += t.checks
	r.denied += t.denied
	r.errors += t.errors
	r.latency.merge(&t.latency)
	if r.firstErr == nil {
		r.firstErr = t.firstErr
	}
	if !t.firstAllowed.IsZero() && (r.firstAllowed.IsZero() || t.firstAllowed.Before(r.firstAllowed)) {
		r.firstAllowed = t.firstAllowed
	}
}

// processCPU returns the user + system CPU time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
