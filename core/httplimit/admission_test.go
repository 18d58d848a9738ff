package httplimit_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// renewLog is a RenewObserver that keeps every renewal's error.
type renewLog struct {
	mu   sync.Mutex
	errs []error
}

func (o *renewLog) Decided(context.Context, core.Request, core.Result)  {}
func (o *renewLog) BreakerChanged(core.BreakerState, core.BreakerState) {}
func (o *renewLog) Renewed(_ context.Context, _ core.Result, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, err)
}

func (o *renewLog) all() []error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]error(nil), o.errs...)
}

// A lease that expired before a renewal (the store's clock moved past its
// TTL) is reported lost to the RenewObservers, once: the middleware renews
// it no more, and the request runs on. Renewals before the clock moved
// (when the test is slow to move it) report success.
func TestMiddlewareReportsALostLeaseOnce(t *testing.T) {
	var clock atomic.Int64 // store time, in ns after middlewareNow
	store, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow.Add(time.Duration(clock.Load())) }))
	require.NoError(t, err)
	obs := &renewLog{}
	const ttl = 30 * time.Millisecond // a renewal every 10 ms of real time
	l, err := core.NewLimiter(store, core.WithObserver(obs), core.WithLimits(core.Concurrent(1).WithLeaseTTL(ttl)))
	require.NoError(t, err)
	m, err := httplimit.New(l)
	require.NoError(t, err)
	started, release := make(chan httplimit.Outcome), make(chan struct{})
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, _ := httplimit.OutcomeFromContext(r.Context())
		started <- o
		<-release
	}), func(*http.Request) string { return "" })
	done := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		done <- w.Code
	}()

	o := <-started
	clock.Store(int64(time.Hour)) // the lease expires by the store's clock
	lost := func() bool { errs := obs.all(); return len(errs) > 0 && errs[len(errs)-1] != nil }
	require.Eventually(t, lost, 5*time.Second, time.Millisecond, "a renewal found the lease lost")
	time.Sleep(10 * ttl / 3) // ten timer periods: renewals that went on would show
	close(release)

	assert.Equal(t, http.StatusOK, <-done, "the request ran on")
	assert.NotNil(t, o.Result.Lease, "the handler read its Outcome from its context")
	errs := obs.all()
	for _, err := range errs[:len(errs)-1] {
		assert.NoError(t, err, "renewals before the clock moved")
	}
	assert.ErrorIs(t, errs[len(errs)-1], core.ErrLeaseLost, "the last renewal, and no other after it")
}

// Many clients' requests, each renewed every millisecond while its
// handler sleeps a little, released as their handlers return: under
// -race, no renewal races its stop or release, none is reported failed
// (a renewal that lost the race to a release reports nothing), no client
// ever has more than its 3 handlers running, and nothing is held after.
func TestMiddlewareRenewalsRaceReleasesCleanly(t *testing.T) {
	obs := &renewLog{}
	store, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	const perClient = 3
	l, err := core.NewLimiter(store, core.WithObserver(obs), core.WithLimits(core.Concurrent(perClient).WithLeaseTTL(3*time.Millisecond)))
	require.NoError(t, err)
	m, err := httplimit.New(l)
	require.NoError(t, err)
	clients := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}
	var running [4]atomic.Int64
	var most [4]atomic.Int64
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(r.RemoteAddr[8] - '1')
		n := running[i].Add(1)
		for old := most[i].Load(); n > old && !most[i].CompareAndSwap(old, n); old = most[i].Load() {
		}
		time.Sleep(time.Duration(rand.IntN(4)) * time.Millisecond)
		running[i].Add(-1)
	}), func(*http.Request) string { return "" })

	var wg sync.WaitGroup
	for g := range 40 {
		wg.Go(func() {
			for range 25 {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.RemoteAddr = clients[g%len(clients)] + ":1"
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
	wg.Wait()

	for i, c := range clients {
		assert.LessOrEqual(t, most[i].Load(), int64(perClient), "client %s", c)
		assert.Equal(t, int64(0), peekInFlight(t, l, c, 0), "client %s", c)
	}
	for _, err := range obs.all() {
		assert.NoError(t, err)
	}
}
