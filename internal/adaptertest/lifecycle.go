package adaptertest

import (
	"context"
	"fmt"
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

// runLifecycle runs the checks of a request's life in the middleware:
// lease renewal, the Outcome in the handler's context, a limiter mounted
// twice, free requests and hijacked connections.
func runLifecycle(t *testing.T, rt Router) {
	t.Run("a lease is renewed while its handler runs", func(t *testing.T) {
		runRenew(t, rt)
	})
	t.Run("a limiter mounted twice on a request decides it once", func(t *testing.T) {
		runTwice(t, rt)
	})
	t.Run("a cost of 0 from the cost func still needs a place", func(t *testing.T) {
		runFreeInFlight(t, rt)
	})
	t.Run("a hijacked connection is counted by outcome", func(t *testing.T) {
		runHijack(t, rt)
	})
}

// startHold serves GET /hold of h for client in the background and
// returns the gate that ends its handler, once the handler runs, and the
// channel of its response.
func startHold(t *testing.T, h http.Handler, client string) (chan struct{}, chan *httptest.ResponseRecorder) {
	t.Helper()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, newRequest(step{path: "/hold", client: client}))
		done <- w
	}()
	select {
	case gate := <-Held:
		return gate, done
	case w := <-done:
		t.Fatalf("a request of %s did not reach its handler: %d", client, w.Code)
		return nil, nil
	}
}

// inFlight returns the leases of client held under the Concurrency limit
// of l's tier, its only limit.
func inFlight(t *testing.T, l *core.Limiter, client string) int64 {
	t.Helper()
	res, err := l.AllowN(context.Background(), client, 0)
	require.NoError(t, err)
	return res.Binding().InFlight()
}

// A manualClock is a store clock that moves only when a test says.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// renewStore is a memory store on a manual clock that remembers, per
// lease, the store time of its last renewal that found it held.
type renewStore struct {
	*memstore.Store
	clock *manualClock
	mu    sync.Mutex
	at    map[string]time.Time
}

func (s *renewStore) Renew(ctx context.Context, key string, l core.Limit, lease string) (bool, error) {
	at := s.clock.Now() // the store reads its clock at or after this
	held, err := s.Store.Renew(ctx, key, l, lease)
	if held {
		s.mu.Lock()
		s.at[lease] = at
		s.mu.Unlock()
	}
	return held, err
}

// renewedSince reports how many leases were renewed at or after since.
func (s *renewStore) renewedSince(since time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, at := range s.at {
		if !at.Before(since) {
			n++
		}
	}
	return n
}

// runRenew replays the trickled uploads: under Concurrent(2) with
// a lease TTL of 300 ms, two requests of a client hold their handlers for
// four TTLs by the store's clock, which the test moves by two thirds of a
// TTL at a time. After each move it waits (real time, up to 5 s: the
// renewal timer fires every 100 ms) until both leases were renewed at the
// new time, then a third request must be denied. Without renewal the
// leases expire at the second move and the third request runs.
func runRenew(t *testing.T, rt Router) {
	require.NotNil(t, rt.Finish, "Router.Finish")
	const ttl = 300 * time.Millisecond
	clock := &manualClock{now: now}
	ms, err := memstore.New(memstore.WithClock(clock.Now))
	require.NoError(t, err)
	store := &renewStore{Store: ms, clock: clock, at: map[string]time.Time{}}
	l, err := core.NewLimiter(store, core.WithDenyCache(0),
		core.WithLimits(core.Concurrent(2).WithLeaseTTL(ttl).WithName("running")))
	require.NoError(t, err)
	h := rt.Finish(l)
	gate1, done1 := startHold(t, h, alice)
	gate2, done2 := startHold(t, h, alice)

	for round := range 6 {
		since := clock.advance(ttl * 2 / 3)
		for deadline := time.Now().Add(5 * time.Second); store.renewedSince(since) < 2 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, newRequest(step{path: "/quiet", client: alice}))
		require.Equal(t, http.StatusTooManyRequests, w.Code, "a 3rd request while two run, %v after they started", time.Duration(round+1)*ttl*2/3)
	}
	close(gate1)
	close(gate2)
	assert.Equal(t, http.StatusOK, (<-done1).Code)
	assert.Equal(t, http.StatusOK, (<-done2).Code)
	assert.Equal(t, int64(0), inFlight(t, l, alice), "both leases released when the handlers returned")
}

// countingObserver counts decisions.
type countingObserver struct{ decided atomic.Int64 }

func (o *countingObserver) Decided(context.Context, core.Request, core.Result)  { o.decided.Add(1) }
func (o *countingObserver) BreakerChanged(core.BreakerState, core.BreakerState) {}

// TwiceHandler is the handler of [Router.Twice]: it writes the name and
// Remaining of the binding limit of the Outcome in the request's context
// (httplimit.OutcomeFromContext), or "no outcome".
func TwiceHandler(w http.ResponseWriter, r *http.Request) {
	o, ok := httplimit.OutcomeFromContext(r.Context())
	if !ok {
		fmt.Fprint(w, "no outcome")
		return
	}
	b := o.Result.Binding()
	fmt.Fprintf(w, "%s r=%d", b.Limit.Name, b.Remaining)
}

// runTwice checks a limiter mounted twice on one request (the chi
// r.Use + r.With, gin group + route): it takes once, is observed once and
// serves its quota; a lease of Concurrent(1) is released once the request
// ends, so sequential requests all run; a different inner limiter still
// applies. The handler reads the innermost Outcome from its context.
func runTwice(t *testing.T, rt Router) {
	require.NotNil(t, rt.Twice, "Router.Twice")
	serve := func(h http.Handler) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, newRequest(step{path: "/twice", client: alice}))
		return w
	}
	t.Run("PerMinute(10) mounted twice serves 10 of 20", func(t *testing.T) {
		obs := &countingObserver{}
		l := newLimiter(t, nil, core.WithObserver(obs), core.WithLimits(core.PerMinute(10).WithName("api")))
		h := rt.Twice(l, l)
		served := 0
		for i := range 20 {
			w := serve(h)
			if w.Code == http.StatusOK {
				served++
				assert.Equal(t, fmt.Sprintf("api r=%d", 9-i), w.Body.String(), "the handler reads its Outcome")
			}
		}
		assert.Equal(t, 10, served)
		assert.Equal(t, int64(20), obs.decided.Load(), "one decision per request")
	})
	t.Run("Concurrent(1) mounted twice serves sequential requests", func(t *testing.T) {
		l := newLimiter(t, nil, core.WithLimits(core.Concurrent(1).WithName("running")))
		h := rt.Twice(l, l)
		for i := range 20 {
			require.Equal(t, http.StatusOK, serve(h).Code, "request %d", i+1)
		}
		assert.Equal(t, int64(0), inFlight(t, l, alice))
	})
	t.Run("another limiter inside still applies", func(t *testing.T) {
		outer := newLimiter(t, nil, core.WithLimits(core.PerMinute(10).WithName("outer")))
		inner := newLimiter(t, nil, core.WithLimits(core.PerMinute(5).WithName("inner")))
		h := rt.Twice(outer, inner)
		served := 0
		for range 20 {
			w := serve(h)
			if w.Code == http.StatusOK {
				served++
				assert.Contains(t, w.Body.String(), "inner r=", "the innermost Outcome")
			}
		}
		assert.Equal(t, 5, served)
	})
}

// runFreeInFlight checks that a request whose cost func says 0 takes a
// lease under Concurrent(2): it is no peek that runs beside the limit.
func runFreeInFlight(t *testing.T, rt Router) {
	require.NotNil(t, rt.Finish, "Router.Finish")
	l := newLimiter(t, nil, core.WithLimits(core.Concurrent(2).WithName("running")))
	h := rt.Finish(l, httplimit.WithCostFunc(func(*http.Request) int64 { return 0 }))
	gate1, done1 := startHold(t, h, alice)
	gate2, done2 := startHold(t, h, alice)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, newRequest(step{path: "/quiet", client: alice}))
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "a 3rd free request while two run")
	close(gate1)
	close(gate2)
	assert.Equal(t, http.StatusOK, (<-done1).Code)
	assert.Equal(t, http.StatusOK, (<-done2).Code)
	assert.Equal(t, int64(0), inFlight(t, l, alice))
}

// runHijack serves, on a real server, 20 requests of a handler that
// hijacks the connection and answers 401 in raw bytes, under a login
// guard of 5 failures a minute: the first 5 run and are charged, then the
// client is denied. A handler that flushes a 200 before hijacking is
// counted as that success. WithFinish gets httplimit.StatusHijacked, then 200.
func runHijack(t *testing.T, rt Router) {
	require.NotNil(t, rt.Finish, "Router.Finish")
	var mu sync.Mutex
	var statuses []int
	record := httplimit.WithFinish(func(_ *http.Request, _ httplimit.Outcome, status int) {
		mu.Lock()
		defer mu.Unlock()
		statuses = append(statuses, status)
	})
	l := newLimiter(t, nil, core.WithLimits(core.PerMinute(5).WithName("login")))
	srv := httptest.NewServer(rt.Finish(l, httplimit.WithChargeIf(httplimit.FailedRequests), record))
	defer srv.Close()
	get := func(path string) int {
		res, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer res.Body.Close()
		return res.StatusCode
	}

	finished := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(statuses)
	}
	// waitFinished waits until n requests finished: the client reads a
	// hijacked response before its handler returns, and a request sent
	// before the previous one is charged is checked beside it
	// (httplimit.WithChargeIf's bound for requests in flight together).
	waitFinished := func(n int) {
		for deadline := time.Now().Add(5 * time.Second); finished() < n && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}

	require.Equal(t, http.StatusOK, get("/hijack-after-200"), "a success flushed before the hijack")
	waitFinished(1)
	counts := map[int]int{}
	for range 20 {
		code := get("/hijack")
		counts[code]++
		waitFinished(1 + counts[http.StatusUnauthorized])
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: 5, http.StatusTooManyRequests: 15}, counts)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []int{200, httplimit.StatusHijacked, httplimit.StatusHijacked, httplimit.StatusHijacked, httplimit.StatusHijacked, httplimit.StatusHijacked}, statuses)
}

// hijack is the /hijack route of [Router.Finish].
func hijack(w http.ResponseWriter, _ *http.Request) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	_, _ = rw.WriteString("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	_ = rw.Flush()
}

// hijackAfter200 is the /hijack-after-200 route of [Router.Finish].
func hijackAfter200(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Length", "2")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	conn, rw, err := rc.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = rw.WriteString("ok")
	_ = rw.Flush()
}
