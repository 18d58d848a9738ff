package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// The shape of the load of testInFlight.
const (
	inFlightClients  = 4
	inFlightMax      = 3 // N of the Concurrency limit
	inFlightRequests = 12
	// inFlightHold is how long an admitted "request" runs: long enough
	// for the other goroutines of its client to find its place taken,
	// even over a store whose takes of one client queue on a loaded
	// machine (a database row lock: a few ms each).
	inFlightHold = 20 * time.Millisecond
)

// inFlightTimeout returns the limiters' timeout in testInFlight: 10 s, so
// that a loaded machine does not time out, halved until s accepts it (a
// store's [core.Capabilities].CheckTimeout refuses one longer than a
// cluster client's ReadTimeout).
func inFlightTimeout(s core.Store) time.Duration {
	d := 10 * time.Second
	if check := core.CapabilitiesOf(s).CheckTimeout; check != nil {
		for d > 100*time.Millisecond && check(d) != nil {
			d /= 2
		}
	}
	return d
}

// testInFlight runs 64 goroutines, spread over the stores (app nodes,
// each with its own [core.Limiter]) and over 4 clients, each making
// requests that acquire, count themselves in flight for their client (the
// count the "handler" sees), sleep, uncount and release. The clock is
// frozen, so no lease expires: only releases free places.
func testInFlight(t *testing.T, stores []core.Store) {
	if _, ok := leaser(stores[0]); !ok {
		t.Skipf("%T does not implement core.Leaser: no Concurrency limits", stores[0])
	}
	limits := []core.Limit{core.PerHour(1_000_000), core.Concurrent(inFlightMax)}
	prefix := uniquePrefix()
	limiters := make([]*core.Limiter, len(stores))
	for i, s := range stores {
		// FailClosed, so that a store that cannot answer (a timeout on a
		// loaded machine) denies instead of admitting without a lease;
		// and a generous timeout, so that it does not happen.
		l, err := core.NewLimiter(s, core.WithLimits(limits...), core.WithPrefix(prefix),
			core.WithFailureMode(core.FailClosed), core.WithTimeout(inFlightTimeout(s)), core.WithoutBreaker())
		require.NoError(t, err)
		limiters[i] = l
	}
	var inFlight, peak [inFlightClients]atomic.Int64
	var admitted, degraded atomic.Int64
	var errs sync.Map
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range concurrencyGoroutines {
		l, c := limiters[g%len(limiters)], (g/len(limiters))%inFlightClients
		wg.Go(func() {
			<-start
			for range inFlightRequests {
				res, err := l.Allow(context.Background(), fmt.Sprintf("client-%d", c))
				switch {
				case err != nil:
					errs.Store(err.Error(), true)
					continue
				case res.Degraded:
					degraded.Add(1)
				case res.Allowed:
					admitted.Add(1)
					now := inFlight[c].Add(1)
					for p := peak[c].Load(); now > p && !peak[c].CompareAndSwap(p, now); p = peak[c].Load() {
					}
					time.Sleep(inFlightHold)
					inFlight[c].Add(-1) // the handler returned...
					if err := l.Release(context.Background(), res); err != nil {
						errs.Store(err.Error(), true) // ...then the middleware releases
					}
					continue
				}
				time.Sleep(inFlightHold / 4) // denied: a client retrying soon
			}
		})
	}
	close(start)
	wg.Wait()
	errs.Range(func(k, _ any) bool { t.Errorf("error: %s", k); return true })
	assert.Zero(t, degraded.Load(), "degraded decisions (the store did not answer within 10s)")
	for c := range inFlightClients {
		assert.LessOrEqual(t, peak[c].Load(), int64(inFlightMax), "client-%d: most requests seen in flight", c)
		assert.Equal(t, int64(inFlightMax), peak[c].Load(),
			"client-%d: 16 goroutines never filled the %d places: the test did not test", c, inFlightMax)
		res, err := limiters[0].AllowN(context.Background(), fmt.Sprintf("client-%d", c), 0)
		require.NoError(t, err)
		assert.Equal(t, int64(0), res.Decision(1).InFlight(), "client-%d: leases left after every request ended", c)
	}
	t.Logf("%d requests admitted of %d", admitted.Load(), concurrencyGoroutines*inFlightRequests)
}
