package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// The scenario every picture shows: one client, one limit of 10 per
// second, and traffic that first bursts just before a window boundary,
// then offers three times the rate. Times are offsets from start, which
// falls on a whole second, so the 1 s windows of the window algorithms
// (aligned to the store's epoch) begin at every whole offset.
const (
	limitRate   = 10
	limitPeriod = time.Second

	burstAt    = 900 * time.Millisecond // a burst just before the 1 s boundary
	burstSize  = 20
	burstSpace = 2500 * time.Microsecond

	steadyFrom = 1 * time.Second // then 30 per second, three times the limit
	steadyTo   = 4 * time.Second
	steadyRate = 3 * limitRate
)

// start is the instant at offset 0: a whole second (and a whole second
// after the store's epoch, 2024-01-01), so window boundaries are at whole
// offsets.
var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// traffic returns the offsets at which the client sends, in order.
func traffic() []time.Duration {
	var ts []time.Duration
	for i := range burstSize {
		ts = append(ts, burstAt+time.Duration(i)*burstSpace)
	}
	for k := int64(0); ; k++ {
		t := steadyFrom + time.Duration(k*int64(time.Second)/steadyRate)
		if t >= steadyTo {
			return ts
		}
		ts = append(ts, t)
	}
}

// A run is the outcome of the traffic under one algorithm.
type run struct {
	alg      core.Algorithm
	offered  []time.Duration
	admitted []time.Duration
}

// simulate sends the traffic, one request at a time, to a fresh memory
// store whose clock reads the request's time, and records what it admits.
func simulate(alg core.Algorithm) (run, error) {
	var now time.Time
	store, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
	if err != nil {
		return run{}, err
	}
	limits := []core.Limit{core.PerSecond(limitRate).WithAlgorithm(alg)}
	keys := []string{"pictures:{client}:" + limits[0].EffectiveName() + ":" + alg.Tag()}
	r := run{alg: alg, offered: traffic()}
	var dst []core.Decision
	for _, t := range r.offered {
		now = start.Add(t)
		dst, err = store.Take(context.Background(), dst[:0], keys, limits, 1)
		if err != nil {
			return run{}, fmt.Errorf("take at %v: %w", t, err)
		}
		if dst[0].Allowed {
			r.admitted = append(r.admitted, t)
		}
	}
	return r, nil
}

// countIn returns how many of ts (sorted) fall in (from, to].
func countIn(ts []time.Duration, from, to time.Duration) int {
	n := 0
	for _, t := range ts {
		if t > from && t <= to {
			n++
		}
	}
	return n
}

// maxMoving returns the most admitted requests in any moving window
// (t − Period, t]. The maximum is reached at an admission, so checking
// each one is exact.
func maxMoving(ts []time.Duration) int {
	most := 0
	for _, t := range ts {
		most = max(most, countIn(ts, t-limitPeriod, t))
	}
	return most
}
