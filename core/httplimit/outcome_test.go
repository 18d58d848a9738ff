package httplimit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// loginLimit is the guard of the tests: 5 failed logins a minute.
var loginLimit = core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog)

// ledger wraps a store and counts what reached it: every call, and the
// charges it admitted (a take of cost > 0 that every limit allowed).
type ledger struct {
	core.Store
	calls, charged atomic.Int64
}

func (s *ledger) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.calls.Add(1)
	ds, err := s.Store.Take(ctx, dst, keys, limits, cost)
	if err == nil && cost > 0 && core.NewResult(ds...).Allowed {
		s.charged.Add(cost)
	}
	return ds, err
}

// Capabilities forwards the inner store's clock, so the limiter's deny
// cache reads the test's frozen time.
func (s *ledger) Capabilities() core.Capabilities {
	return core.Capabilities{Clock: core.CapabilitiesOf(s.Store).Clock}
}

func memStore(t *testing.T) core.Store {
	ms, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	return ms
}

// redisStore is a store on the shared standalone server, frozen at
// middlewareNow (the test-only clock of redisstore), under a fresh prefix.
func redisStore(t *testing.T) (core.Store, string) {
	c := redisstore.NewClient(redistest.Standalone(t).Options()) // the settings the store asks for
	t.Cleanup(func() { _ = c.Close() })
	rs, err := redisstore.New(c, redisstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	return rs, redistest.Prefix(t)
}

// stores are the stores the charge is checked on.
var stores = []struct {
	name string
	new  func(t *testing.T) (core.Store, []core.Option)
}{
	{"memstore", func(t *testing.T) (core.Store, []core.Option) { return memStore(t), nil }},
	{"redis", func(t *testing.T) (core.Store, []core.Option) {
		rs, prefix := redisStore(t)
		return rs, []core.Option{core.WithPrefix(prefix), core.WithTimeout(5 * time.Second)}
	}},
}

// loginHandler answers 200 for password "right", else 401, and counts the
// attempts that reached it.
type loginHandler struct{ calls atomic.Int64 }

func (h *loginHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	if r.Header.Get("X-Password") != "right" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	_, _ = w.Write([]byte("welcome"))
}

func loginRequest(client, password string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/login", nil)
	r.RemoteAddr = client + ":1234"
	r.Header.Set("X-Password", password)
	return r
}

func serveLogin(h http.Handler, client, password string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, loginRequest(client, password))
	return w
}

func guard(t *testing.T, store core.Store, lopts []core.Option, opts ...httplimit.Option) (http.Handler, *loginHandler, *core.Limiter) {
	t.Helper()
	l, err := core.NewLimiter(store, append([]core.Option{core.WithLimits(loginLimit)}, lopts...)...)
	require.NoError(t, err)
	m, err := httplimit.New(l, opts...)
	require.NoError(t, err)
	login := &loginHandler{}
	return m.Handler(login, func(*http.Request) string { return "/login" }), login, l
}

func remaining(t *testing.T, l *core.Limiter, client string) int64 {
	t.Helper()
	res, err := l.AllowN(context.Background(), client, 0)
	require.NoError(t, err)
	return res.Binding().Remaining
}

// A login guard with WithChargeIf(FailedRequests): successful logins are
// never counted, 5 failed ones are, and the 6th attempt is denied before
// the handler runs, with the denial of any other request. The rate-limit
// fields of an admitted response come from the check: the quota before
// the request's own charge.
func TestChargeIfFailedRequestsCountsOnlyFailures(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			store, lopts := st.new(t)
			h, login, l := guard(t, store, lopts, httplimit.WithChargeIf(httplimit.FailedRequests))
			const alice = "192.0.2.1"

			for i := range 3 {
				w := serveLogin(h, alice, "right")
				require.Equal(t, http.StatusOK, w.Code, "success %d", i+1)
				assert.Equal(t, `"login";r=5;t=0`, w.Header().Get("RateLimit"), "successes are never counted")
			}
			for i := range 5 {
				w := serveLogin(h, alice, "guess")
				require.Equal(t, http.StatusUnauthorized, w.Code, "failure %d", i+1)
				assert.Equal(t, fmt.Sprintf(`"login";r=%d;t=%d`, 5-i, min(i, 1)*60), w.Header().Get("RateLimit"),
					"the quota the check saw, before this failure's charge")
			}
			before := login.calls.Load()
			for _, pw := range []string{"guess", "right"} {
				w := serveLogin(h, alice, pw)
				assert.Equal(t, http.StatusTooManyRequests, w.Code, "password %q: the quota is spent", pw)
				assert.Equal(t, "60", w.Header().Get("Retry-After"))
				assert.Equal(t, `"login";r=0;t=60`, w.Header().Get("RateLimit"))
			}
			assert.Equal(t, before, login.calls.Load(), "denied before the handler")
			assert.Equal(t, int64(0), remaining(t, l, alice))
			assert.Equal(t, http.StatusOK, serveLogin(h, "192.0.2.2", "right").Code, "another client")
		})
	}
}

func TestChargeIfSuccessfulRequestsCountsOnlySuccesses(t *testing.T) {
	h, _, l := guard(t, memStore(t), nil, httplimit.WithChargeIf(httplimit.SuccessfulRequests))
	for range 7 {
		require.Equal(t, http.StatusUnauthorized, serveLogin(h, "192.0.2.1", "guess").Code)
	}
	assert.Equal(t, int64(5), remaining(t, l, "192.0.2.1"), "failures are never counted")
	for range 5 {
		require.Equal(t, http.StatusOK, serveLogin(h, "192.0.2.1", "right").Code)
	}
	assert.Equal(t, http.StatusTooManyRequests, serveLogin(h, "192.0.2.1", "guess").Code)
}

// The check asks whether the request's cost fits, not whether any quota is
// left: with 1 of 5 left, a request of cost 2 is denied, one of cost 1
// passes.
func TestChargeIfChecksThatTheCostFits(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(loginLimit))
	m, err := httplimit.New(l, httplimit.WithChargeIf(httplimit.FailedRequests), httplimit.WithCostFunc(func(r *http.Request) int64 {
		if r.Header.Get("X-Cost") == "1" {
			return 1
		}
		return 2
	}))
	require.NoError(t, err)
	h := m.Handler(&loginHandler{}, func(*http.Request) string { return "" })
	for range 2 {
		require.Equal(t, http.StatusUnauthorized, serveLogin(h, "192.0.2.1", "guess").Code)
	}
	require.Equal(t, int64(1), remaining(t, l, "192.0.2.1"))
	w := serveLogin(h, "192.0.2.1", "guess")
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "cost 2 does not fit in 1")
	assert.Equal(t, "60", w.Header().Get("Retry-After"), "the store's wait for cost 2: the clock is frozen, the log's entries age out a minute after it")
	r := loginRequest("192.0.2.1", "guess")
	r.Header.Set("X-Cost", "1")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusUnauthorized, w.Code, "cost 1 fits")
	assert.Equal(t, int64(0), remaining(t, l, "192.0.2.1"))
}

// The bound of WithChargeIf, proven: K requests of one client held in the
// handler together all pass the check with one request left; all fail and
// are charged after; the store counts the limit and no more (the first
// charge fits, the others are denied and write nothing), L-1+K attempts
// ran, and the next one is denied before the handler. Several clients at
// once, each with its own K.
func TestChargeIfOvershootIsBoundedByRequestsInFlight(t *testing.T) {
	const clients, inFlight = 3, 8
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			store, lopts := st.new(t)
			counted := &ledger{Store: store}
			l, err := core.NewLimiter(counted, append([]core.Option{core.WithLimits(loginLimit)}, lopts...)...)
			require.NoError(t, err)
			m, err := httplimit.New(l, httplimit.WithChargeIf(httplimit.FailedRequests))
			require.NoError(t, err)

			var entered [clients]atomic.Int64
			var held [clients]sync.WaitGroup // released when all K of a client are in the handler
			for i := range held {
				held[i].Add(inFlight)
			}
			holding := atomic.Bool{}
			h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c := clientIndex(r)
				entered[c].Add(1)
				if holding.Load() {
					held[c].Done()
					held[c].Wait() // a barrier: every one of the K passed the check before any is charged
				}
				w.WriteHeader(http.StatusUnauthorized)
			}), func(*http.Request) string { return "/login" })

			limit := loginLimit.Capacity()
			for c := range clients {
				for range limit - 1 {
					require.Equal(t, http.StatusUnauthorized, serveLogin(h, clientAddr(c), "guess").Code)
				}
			}
			holding.Store(true)
			var wg sync.WaitGroup
			codes := make(chan int, clients*inFlight)
			for c := range clients {
				for range inFlight {
					wg.Go(func() { codes <- serveLogin(h, clientAddr(c), "guess").Code })
				}
			}
			wg.Wait()
			close(codes)
			holding.Store(false)
			for code := range codes {
				assert.Equal(t, http.StatusUnauthorized, code, "every request in flight passed the check")
			}

			assert.Equal(t, clients*limit, counted.charged.Load(), "the store counted each client's limit, no more")
			for c := range clients {
				assert.Equal(t, limit-1+inFlight, entered[c].Load(), "client %d: L-1+K attempts ran", c)
				assert.Equal(t, int64(0), remaining(t, l, clientAddr(c)))
				assert.Equal(t, http.StatusTooManyRequests, serveLogin(h, clientAddr(c), "guess").Code, "client %d: next denied", c)
				assert.Equal(t, limit-1+inFlight, entered[c].Load(), "client %d: denied before the handler", c)
			}
		})
	}
}

func clientAddr(c int) string { return fmt.Sprintf("198.51.100.%d", c+1) }

func clientIndex(r *http.Request) int {
	var c int
	_, _ = fmt.Sscanf(strings.TrimPrefix(r.RemoteAddr, "198.51.100."), "%d", &c)
	return c - 1
}

// The deny cache: a charge after the handler that the store denies (the
// quota was spent meanwhile) fills it, so the next attempt is denied
// without the store; a charge that is admitted and leaves the quota empty
// has no wait to cache, so the next attempt's check asks the store (a peek,
// then the take that denies it and fills the cache), and the attempts
// after that cost the store nothing.
func TestChargeIfAndTheDenyCache(t *testing.T) {
	newGuard := func(t *testing.T) (http.Handler, *ledger) {
		counted := &ledger{Store: memStore(t)}
		h, _, _ := guard(t, counted, nil, httplimit.WithChargeIf(httplimit.FailedRequests))
		return h, counted
	}
	t.Run("an admitted charge that empties the quota", func(t *testing.T) {
		h, counted := newGuard(t)
		for range 5 {
			require.Equal(t, http.StatusUnauthorized, serveLogin(h, "192.0.2.1", "guess").Code)
		}
		require.Equal(t, int64(10), counted.calls.Load(), "a check and a charge each")
		require.Equal(t, http.StatusTooManyRequests, serveLogin(h, "192.0.2.1", "guess").Code)
		assert.Equal(t, int64(12), counted.calls.Load(), "the peek, then the take that denies")
		for range 3 {
			require.Equal(t, http.StatusTooManyRequests, serveLogin(h, "192.0.2.1", "right").Code)
		}
		assert.Equal(t, int64(12), counted.calls.Load(), "served from the deny cache")
	})
	t.Run("a charge the store denies", func(t *testing.T) {
		counted := &ledger{Store: memStore(t)}
		l, err := core.NewLimiter(counted, core.WithLimits(loginLimit))
		require.NoError(t, err)
		m, err := httplimit.New(l, httplimit.WithChargeIf(httplimit.FailedRequests))
		require.NoError(t, err)
		var started, release sync.WaitGroup
		hold := atomic.Bool{}
		h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if hold.Load() {
				started.Done()
				release.Wait()
			}
			w.WriteHeader(http.StatusUnauthorized)
		}), func(*http.Request) string { return "" })
		for range 4 {
			require.Equal(t, http.StatusUnauthorized, serveLogin(h, "192.0.2.1", "guess").Code)
		}
		// Two attempts pass the check together, with one request left: the
		// first charge fits, the second is denied.
		hold.Store(true)
		started.Add(2)
		release.Add(1)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { assert.Equal(t, http.StatusUnauthorized, serveLogin(h, "192.0.2.1", "guess").Code) })
		}
		started.Wait()
		release.Done()
		wg.Wait()
		hold.Store(false)
		require.Equal(t, int64(5), counted.charged.Load())
		calls := counted.calls.Load()
		for range 3 {
			require.Equal(t, http.StatusTooManyRequests, serveLogin(h, "192.0.2.1", "right").Code)
		}
		assert.Equal(t, calls, counted.calls.Load(), "the denied charge filled the deny cache: no store call")
	})
}

// The charge survives the client hanging up: it runs under
// context.WithoutCancel of the request's context.
func TestChargeIfChargesWhenTheClientHasGone(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(loginLimit))
	m, err := httplimit.New(l, httplimit.WithChargeIf(httplimit.FailedRequests))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		cancel() // the client hangs up while the handler runs
		w.WriteHeader(http.StatusUnauthorized)
	}), func(*http.Request) string { return "" })
	w := httptest.NewRecorder()
	h.ServeHTTP(w, loginRequest("192.0.2.1", "guess").WithContext(ctx))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, int64(4), remaining(t, l, "192.0.2.1"), "charged all the same")
}

// failingCharges fails every take that charges (cost > 0) with err; peeks
// pass to the store.
type failingCharges struct {
	core.Store
	err error
}

func (s failingCharges) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	if cost > 0 {
		return dst, s.err
	}
	return s.Store.Take(ctx, dst, keys, limits, cost)
}

// A charge that fails is logged, sampled, and changes nothing about the
// response, which is already written: a store error, and a store that is
// unavailable (the charge is degraded: nothing was counted).
func TestChargeIfLogsAFailedCharge(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"a store error", errors.New("ERR script bug")},
		{"the store unavailable", fmt.Errorf("%w: dial tcp", core.ErrStoreUnavailable)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := logtest.CaptureDefault(t, slog.LevelInfo)
			l, err := core.NewLimiter(failingCharges{Store: memStore(t), err: tt.err}, core.WithLimits(loginLimit), core.WithoutBreaker())
			require.NoError(t, err)
			m, err := httplimit.New(l, httplimit.WithChargeIf(httplimit.FailedRequests))
			require.NoError(t, err)
			h := m.Handler(&loginHandler{}, func(*http.Request) string { return "" })

			w := serveLogin(h, "192.0.2.1", "guess")

			assert.Equal(t, http.StatusUnauthorized, w.Code, "the handler's response, untouched")
			assert.Contains(t, buf.String(), "ratelimit: charge after the handler failed")
			assert.Contains(t, buf.String(), "status=401")
			assert.Contains(t, buf.String(), "level=WARN")
		})
	}
}

// The charge composes with WithFinish: it runs first, whatever the order
// of the options, so the WithFinish func sees the request charged; and it
// runs for a handler that panics (500 is a failure), before the panic
// goes on.
func TestChargeIfRunsBeforeWithFinish(t *testing.T) {
	for _, order := range []string{"WithChargeIf first", "WithFinish first"} {
		t.Run(order, func(t *testing.T) {
			l := newTestLimiter(t, core.WithLimits(loginLimit))
			var seen []int64
			opts := []httplimit.Option{
				httplimit.WithChargeIf(httplimit.FailedRequests),
				httplimit.WithFinish(func(r *http.Request, _ httplimit.Outcome, _ int) {
					seen = append(seen, remaining(t, l, "192.0.2.1"))
				}),
			}
			if order == "WithFinish first" {
				opts[0], opts[1] = opts[1], opts[0]
			}
			m, err := httplimit.New(l, opts...)
			require.NoError(t, err)
			h := m.Handler(&loginHandler{}, func(*http.Request) string { return "" })
			serveLogin(h, "192.0.2.1", "guess")
			serveLogin(h, "192.0.2.1", "right")
			panicking := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
				func(*http.Request) string { return "" })
			assert.PanicsWithValue(t, "boom", func() { serveLogin(panicking, "192.0.2.1", "right") })
			assert.Equal(t, []int64{4, 4, 3}, seen, "failure charged, success not, panic charged")
		})
	}
	t.Run("Finishes with WithChargeIf alone", func(t *testing.T) {
		m, err := httplimit.New(newTestLimiter(t, core.WithLimits(loginLimit)), httplimit.WithChargeIf(httplimit.FailedRequests))
		require.NoError(t, err)
		assert.True(t, m.Finishes())
		plain, err := httplimit.New(newTestLimiter(t, core.WithLimits(loginLimit)))
		require.NoError(t, err)
		assert.False(t, plain.Finishes())
	})
}

// Skipped requests are neither checked nor charged; a CostFunc returning
// 0 makes a peek that is never charged; in shadow mode the attempt a
// check would deny runs (shadowed) and the store still counts the limit.
func TestChargeIfSkipPeekAndShadow(t *testing.T) {
	t.Run("skipped", func(t *testing.T) {
		h, _, l := guard(t, memStore(t), nil, httplimit.WithChargeIf(httplimit.FailedRequests),
			httplimit.WithSkip(func(r *http.Request) bool { return r.Header.Get("X-Internal") != "" }))
		r := loginRequest("192.0.2.1", "guess")
		r.Header.Set("X-Internal", "1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusUnauthorized, w.Code)
		assert.Empty(t, w.Header().Get("RateLimit"))
		assert.Equal(t, int64(5), remaining(t, l, "192.0.2.1"))
	})
	t.Run("cost 0 at request time", func(t *testing.T) {
		h, _, l := guard(t, memStore(t), nil, httplimit.WithChargeIf(httplimit.FailedRequests),
			httplimit.WithCostFunc(func(*http.Request) int64 { return 0 }))
		for range 7 {
			assert.Equal(t, http.StatusUnauthorized, serveLogin(h, "192.0.2.1", "guess").Code)
		}
		assert.Equal(t, int64(5), remaining(t, l, "192.0.2.1"))
	})
	t.Run("shadow", func(t *testing.T) {
		h, login, l := guard(t, memStore(t), []core.Option{core.WithShadow()}, httplimit.WithChargeIf(httplimit.FailedRequests))
		for range 7 {
			assert.Equal(t, http.StatusUnauthorized, serveLogin(h, "192.0.2.1", "guess").Code)
		}
		assert.Equal(t, int64(7), login.calls.Load(), "shadow mode denies nothing")
		assert.Equal(t, int64(0), remaining(t, l, "192.0.2.1"), "and counts the limit, no more")
	})
}

// BenchmarkMiddlewareChargeIf is BenchmarkMiddleware with WithChargeIf:
// a check (a peek) before the handler, and a charge after it for the
// failures, over the memory store.
func BenchmarkMiddlewareChargeIf(b *testing.B) {
	for _, status := range []int{http.StatusOK, http.StatusUnauthorized} {
		b.Run(fmt.Sprintf("status=%d", status), func(b *testing.B) {
			l := benchLimiter(b, core.PerSecond(1e6).WithName("s"))
			mw, err := httplimit.New(l, httplimit.WithChargeIf(httplimit.FailedRequests))
			if err != nil {
				b.Fatal(err)
			}
			h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }),
				func(*http.Request) string { return "/" })
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := &discardWriter{h: make(http.Header)}
				for pb.Next() {
					clear(w.h)
					h.ServeHTTP(w, r)
				}
			})
		})
	}
}

// The check's rule, a cost fits when every limit has at least that many
// Remaining, is the store's own admission test: for every algorithm, at
// instants across several windows and costs of 1 to 3, a peek says the
// cost fits exactly when a take of it is then admitted. (Where they
// disagreed, a request would run uncounted, or be charged before its
// handler.)
func TestCheckAgreesWithTheStoresAdmission(t *testing.T) {
	limits := []core.Limit{
		core.PerMinute(5).WithName("gcra"),
		core.PerMinute(5).WithBurst(3).WithName("gcra-burst"),
		core.PerMinute(5).WithAlgorithm(core.TokenBucket).WithName("bucket"),
		core.PerMinute(5).WithAlgorithm(core.FixedWindow).WithName("fixed"),
		core.PerMinute(5).WithAlgorithm(core.SlidingWindow).WithName("sliding"),
		core.PerMinute(5).WithAlgorithm(core.SlidingLog).WithName("log"),
		core.PerCalendarDay(5, time.UTC).WithName("day"),
	}
	for _, st := range []string{"memstore", "redis"} {
		for _, lim := range limits {
			t.Run(st+"/"+lim.Name, func(t *testing.T) {
				var mu sync.Mutex
				now := middlewareNow
				clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
				var store core.Store
				opts := []core.Option{core.WithLimits(lim), core.WithDenyCache(0)}
				if st == "memstore" {
					ms, err := memstore.New(memstore.WithClock(clock))
					require.NoError(t, err)
					store = ms
				} else {
					c := redisstore.NewClient(redistest.Standalone(t).Options())
					t.Cleanup(func() { _ = c.Close() })
					rs, err := redisstore.New(c, redisstore.WithClock(clock))
					require.NoError(t, err)
					store = rs
					opts = append(opts, core.WithPrefix(redistest.Prefix(t)), core.WithTimeout(5*time.Second))
				}
				l, err := core.NewLimiter(store, opts...)
				require.NoError(t, err)
				ctx := context.Background()
				step := 7 * time.Second
				if lim.Algorithm == core.CalendarWindow {
					step = 3 * time.Hour
				}
				admitted := 0
				for i := range 60 {
					cost := int64(1 + i%3)
					peek, err := l.AllowN(ctx, "client", 0)
					require.NoError(t, err)
					fits := peek.Binding().Remaining >= cost
					res, err := l.AllowN(ctx, "client", cost)
					require.NoError(t, err)
					require.Equal(t, fits, res.Allowed, "step %d, cost %d: the peek said %d left", i, cost, peek.Binding().Remaining)
					if res.Allowed {
						admitted++
					}
					mu.Lock()
					now = now.Add(step)
					mu.Unlock()
				}
				assert.Positive(t, admitted)
				assert.Less(t, admitted, 60, "some takes were denied: both answers were exercised")
			})
		}
	}
}
