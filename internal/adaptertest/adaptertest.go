// Package adaptertest is the scenario table every framework adapter runs
// through its real router: the same requests, the same expected statuses,
// fields and bodies for gin, echo, chi and net/http.
//
// An adapter's test describes its framework with a [Router] and calls
// [Run]. The package imports no framework.
package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/internal/sftest"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// A Router describes one framework for [Run].
type Router struct {
	// New returns the framework's real router with the adapter built from
	// l and opts mounted for every route (r.Use or its equivalent),
	// serving, each with status 200 and body "ok":
	//
	//	GET /hello
	//	GET /users/{id}   (in the framework's syntax)
	//	GET /healthz
	//
	// and the framework's own 404 for anything else.
	New func(l *core.Limiter, opts ...httplimit.Option) http.Handler
	// UsersRoute is the template the framework reports for the users
	// route: "/users/:id", "/users/{id}", "GET /users/{id}".
	UsersRoute string
	// PerRoute returns the framework's real router serving GET /items/{id}
	// (in the framework's syntax) with the adapter built from l and opts
	// mounted on that route only, the way the examples mount the webhook
	// limiter.
	PerRoute func(l *core.Limiter, opts ...httplimit.Option) http.Handler
	// Finish returns the framework's real router with the adapter built
	// from l and opts mounted for every route, serving:
	//
	//	GET /teapot  writes status 418, body "short and stout"
	//	GET /quiet   writes nothing
	//	GET /panic   panics with ErrPanic before writing
	//	GET /stream  flushes through http.NewResponseController(w), fails
	//	             with 500 if that errors, then writes "flushed"
	//	GET /login   writes 200 "welcome" when the X-Password header is
	//	             "right", else 401 (a login, for httplimit.WithChargeIf)
	//	GET /hold    sends a channel on Held, waits until it is closed,
	//	             then writes 200 "done" (a request in flight)
	//	GET /hijack  hijacks the connection and answers 401 in raw bytes
	//	GET /hijack-after-200
	//	             writes and flushes 200, then hijacks and sends "ok"
	//
	// without any middleware that recovers panics.
	Finish func(l *core.Limiter, opts ...httplimit.Option) http.Handler
	// Twice returns the framework's real router serving GET /twice with
	// [TwiceHandler], behind the adapter built from outer mounted the
	// router-wide (or group) way and the adapter built from inner mounted
	// on the route itself: chi r.Use + r.With, a gin group and its route,
	// an echo group and its route, net/http New around New.
	Twice func(outer, inner *core.Limiter) http.Handler
	// OwnErrorBodies is set when, without a deny or error handler, the
	// framework's error handler renders denials and errors (echo), so the
	// body is not the core problem document.
	OwnErrorBodies bool
}

// Clients of the scenarios.
const (
	alice = "192.0.2.1"
	bob   = "192.0.2.2"
)

// secret stands for internal error text that must never reach a client.
const secret = "redis 10.0.0.7:6379 NOAUTH"

var (
	errKey         = errors.New("key func failed: " + secret)
	errUnavailable = fmt.Errorf("%w: dial %s", core.ErrStoreUnavailable, secret)
	errBug         = errors.New("ERR script error: " + secret)
)

// now is the frozen time of every store: no refill happens during a test.
var now = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// A step is one request and what its response must be.
type step struct {
	path    string
	client  string
	apiKey  string // X-API-Key
	cost    int64  // X-Cost, read by costFromHeader; 0 means no header
	rawCost string // X-Cost as is, when set (a 0 or a negative cost)

	status    int
	policy    []policyItem // nil: no RateLimit-Policy field
	limit     *limitItem   // nil: no RateLimit field
	retry     string       // Retry-After; "" means absent
	problem   string       // problem type of the core body; "" means no check
	body      string       // exact body, when set
	noSecrets bool         // the body must not contain internal error text
}

type policyItem struct {
	name string
	q, w int64
}

type limitItem struct {
	name string
	r, t int64
}

// A scenario is a limiter, middleware options and a sequence of steps,
// run against a fresh store.
type scenario struct {
	name   string
	limits []core.Option
	opts   []httplimit.Option
	store  func(core.Store) core.Store // wraps the memstore, when set
	steps  []step
}

// Run runs every scenario through rt's real router, then the checks that
// are not request sequences: the route template that reaches the store and
// exact admission under concurrency.
func Run(t *testing.T, rt Router) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			h := rt.New(newLimiter(t, sc.store, sc.limits...), sc.opts...)
			for i, st := range sc.steps {
				t.Run(fmt.Sprintf("%d %s from %s", i+1, st.path, st.client), func(t *testing.T) {
					checkStep(t, rt, h, st)
				})
			}
		})
	}
	t.Run("the route template, not the raw path, reaches the store", func(t *testing.T) {
		runRouteKey(t, rt)
	})
	t.Run("concurrent requests are admitted exactly", func(t *testing.T) {
		runConcurrent(t, rt)
	})
	t.Run("path parameters reach keyfunc.PathValue", func(t *testing.T) {
		runPathValue(t, rt)
	})
	t.Run("Finish runs once after the handler, with its status", func(t *testing.T) {
		runFinish(t, rt)
	})
	t.Run("WithChargeIf counts failed logins only", func(t *testing.T) {
		runChargeIf(t, rt)
	})
	t.Run("a concurrency limit releases its lease after the handler", func(t *testing.T) {
		runInFlight(t, rt)
	})
	runLifecycle(t, rt)
}

// Held is where each request of the /hold route of [Router.Finish] sends
// a channel when its handler starts; the handler returns once it is
// closed.
var Held = make(chan chan struct{})

// runInFlight checks core.Concurrent through the framework: with 2 in
// flight per client, a 3rd request while two run is denied (429,
// Retry-After) before its handler, another client is not, and once the
// two return (the middleware releasing their leases, also for a handler
// that panicked) the client's next requests pass.
func runInFlight(t *testing.T, rt Router) {
	require.NotNil(t, rt.Finish, "Router.Finish")
	l := newLimiter(t, nil, core.WithLimits(core.PerMinute(100).WithName("api"), core.Concurrent(2).WithName("running")))
	h := rt.Finish(l)
	serve := func(path, client string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, newRequest(step{path: path, client: client}))
		return w
	}
	start := func(client string) (chan struct{}, chan *httptest.ResponseRecorder) {
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() { done <- serve("/hold", client) }()
		select {
		case gate := <-Held:
			return gate, done
		case w := <-done:
			t.Fatalf("a request of %s did not reach its handler: %d", client, w.Code)
			return nil, nil
		}
	}
	inFlight := func(client string) int64 {
		res, err := l.AllowN(context.Background(), client, 0)
		require.NoError(t, err)
		return res.Decision(1).InFlight()
	}

	gate1, done1 := start(alice)
	gate2, done2 := start(alice)
	assert.Equal(t, int64(2), inFlight(alice), "two leases held while the handlers run")
	w := serve("/hold", alice) // denied before its handler: it never blocks
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "a 3rd request while two are in flight")
	assert.Equal(t, "1", w.Header().Get("Retry-After"), "an estimate, at most core.ConcurrencyRetryAfter")
	gateBob, doneBob := start(bob)
	close(gateBob)
	assert.Equal(t, http.StatusOK, (<-doneBob).Code, "another client has places of its own")

	close(gate1)
	close(gate2)
	assert.Equal(t, http.StatusOK, (<-done1).Code)
	assert.Equal(t, http.StatusOK, (<-done2).Code)
	assert.Equal(t, int64(0), inFlight(alice), "both leases released when the handlers returned")
	for range 3 {
		assert.PanicsWithError(t, ErrPanic.Error(), func() { serve("/panic", alice) })
	}
	assert.Equal(t, int64(0), inFlight(alice), "a handler that panics releases its lease too")
	gate3, done3 := start(alice)
	close(gate3)
	assert.Equal(t, http.StatusOK, (<-done3).Code, "a later request passes")
}

// ErrPanic is what the /panic route of [Router.Finish] panics with.
var ErrPanic = errors.New("adaptertest: handler panic")

type finished struct {
	path   string
	status int
	tier   string
}

// runFinish checks that every adapter runs the WithFinish func exactly once
// per admitted request, after the handler, with the final status, also when
// the handler panics (and that the panic still reaches the caller), never
// for a denied request, and that a handler can still flush.
func runFinish(t *testing.T, rt Router) {
	require.NotNil(t, rt.Finish, "Router.Finish")
	var mu sync.Mutex
	var got []finished
	record := httplimit.WithFinish(func(r *http.Request, o httplimit.Outcome, status int) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, finished{r.URL.Path, status, o.Result.Tier})
	})
	h := rt.Finish(newLimiter(t, nil, core.WithLimits(core.PerMinute(5))), record)
	serve := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.RemoteAddr = alice + ":1234"
		h.ServeHTTP(w, r)
		return w
	}
	takeFinished := func() []finished {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}

	tests := []struct {
		path       string
		wantStatus int
	}{
		{"/teapot", http.StatusTeapot},
		{"/quiet", http.StatusOK},
		{"/stream", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			w := serve(tt.path)
			require.Equal(t, tt.wantStatus, w.Code)
			assert.Equal(t, []finished{{tt.path, tt.wantStatus, core.DefaultTierName}}, takeFinished())
			if tt.path == "/stream" {
				assert.True(t, w.Flushed, "the handler's flush reached the connection")
				assert.Equal(t, "flushed", w.Body.String())
			}
		})
	}
	t.Run("/panic", func(t *testing.T) {
		assert.PanicsWithError(t, ErrPanic.Error(), func() { serve("/panic") }, "the panic goes on")
		assert.Equal(t, []finished{{"/panic", http.StatusInternalServerError, core.DefaultTierName}}, takeFinished())
	})
	t.Run("a denied request has no handler to finish", func(t *testing.T) {
		w := serve("/quiet") // the 5th of 5 per minute
		require.Equal(t, http.StatusOK, w.Code)
		takeFinished()
		require.Equal(t, http.StatusTooManyRequests, serve("/quiet").Code)
		assert.Empty(t, takeFinished())
	})
}

// loginAttempts counts the requests that reached the /login handler of
// [FinishRoutes].
var loginAttempts atomic.Int64

// runChargeIf checks httplimit.WithChargeIf through the framework: on a login
// route with 5 failed logins a minute, successful logins are never
// counted, the 6th failed attempt is denied (429) before the handler runs,
// and so is a right password once the quota is spent; a handler that
// panics counts as a failure (500), and the charge runs before a user's
// WithFinish, which sees the request charged.
func runChargeIf(t *testing.T, rt Router) {
	require.NotNil(t, rt.Finish, "Router.Finish")
	l := newLimiter(t, nil, core.WithLimits(core.PerMinute(5).WithName("login")))
	var seen []int64 // what WithFinish saw left of alice's quota
	var mu sync.Mutex
	left := func() int64 {
		res, err := l.AllowN(context.Background(), alice, 0)
		require.NoError(t, err)
		return res.Binding().Remaining
	}
	h := rt.Finish(l, httplimit.WithChargeIf(httplimit.FailedRequests), httplimit.WithFinish(func(*http.Request, httplimit.Outcome, int) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, left())
	}))
	login := func(password string) *httptest.ResponseRecorder {
		r := newRequest(step{path: "/login", client: alice})
		r.Header.Set("X-Password", password)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	for range 3 {
		w := login("right")
		require.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, &limitItem{"login", 5, 0}, parseLimit(t, w.Header()), "successes are never counted")
	}
	for i := range 4 {
		w := login("guess")
		require.Equal(t, http.StatusUnauthorized, w.Code, "failed login %d", i+1)
		assert.Equal(t, int64(5-i), parseLimit(t, w.Header()).r, "the fields show the check, before the charge")
	}
	assert.PanicsWithError(t, ErrPanic.Error(), func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, newRequest(step{path: "/panic", client: alice}))
	}, "the 5th failure: a panic")
	assert.Equal(t, []int64{5, 5, 5, 4, 3, 2, 1, 0}, seen, "WithFinish runs after the charge")
	assert.Equal(t, int64(0), left())

	attempts := loginAttempts.Load()
	for _, pw := range []string{"guess", "right"} {
		w := login(pw)
		assert.Equal(t, http.StatusTooManyRequests, w.Code, "password %q after 5 failures", pw)
		assert.Equal(t, "12", w.Header().Get("Retry-After"), "GCRA at 5 a minute: one attempt back every 12 s")
	}
	assert.Equal(t, attempts, loginAttempts.Load(), "denied before the handler ran")
}

// runPathValue checks that a limiter mounted on one route can key by a path
// parameter through keyfunc.PathValue, whatever the framework.
func runPathValue(t *testing.T, rt Router) {
	require.NotNil(t, rt.PerRoute, "Router.PerRoute")
	rec := &recordingStore{}
	limit := core.PerMinute(5).WithName("item")
	l := newLimiter(t, func(s core.Store) core.Store { rec.Store = s; return rec }, core.WithLimits(limit))

	w := httptest.NewRecorder()
	rt.PerRoute(l, httplimit.WithKey(keyfunc.PathValue("id"))).ServeHTTP(w, newRequest(step{path: "/items/7", client: alice}))

	assert.Equal(t, http.StatusOK, w.Code)
	kb, err := core.NewKeyBuilder(core.DefaultPrefix)
	require.NoError(t, err)
	assert.Equal(t, []string{kb.Key("path:7", limit)}, rec.keys)
}

func newLimiter(t *testing.T, wrap func(core.Store) core.Store, opts ...core.Option) *core.Limiter {
	t.Helper()
	ms, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	var store core.Store = ms
	if wrap != nil {
		store = wrap(ms)
	}
	l, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	return l
}

func newRequest(st step) *http.Request {
	r := httptest.NewRequest(http.MethodGet, st.path, nil)
	r.RemoteAddr = st.client + ":40000"
	if st.apiKey != "" {
		r.Header.Set("X-API-Key", st.apiKey)
	}
	if st.cost != 0 {
		r.Header.Set("X-Cost", strconv.FormatInt(st.cost, 10))
	}
	if st.rawCost != "" {
		r.Header.Set("X-Cost", st.rawCost)
	}
	return r
}

func checkStep(t *testing.T, rt Router, h http.Handler, st step) {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, newRequest(st))

	assert.Equal(t, st.status, w.Code)
	assert.Equal(t, st.policy, parsePolicy(t, w.Header()))
	assert.Equal(t, st.limit, parseLimit(t, w.Header()))
	assert.Equal(t, st.retry, w.Header().Get("Retry-After"))
	if st.body != "" {
		assert.Equal(t, st.body, w.Body.String())
	}
	if st.noSecrets {
		assert.NotContains(t, w.Body.String(), "10.0.0.7")
	}
	if st.problem != "" && !rt.OwnErrorBodies {
		checkProblem(t, w, st)
	}
}

// checkProblem checks the core problem document of a stopped request.
func checkProblem(t *testing.T, w *httptest.ResponseRecorder, st step) {
	assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	var p httplimit.Problem
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p), "body %q", w.Body.String())
	assert.Equal(t, st.problem, p.Type)
	assert.Equal(t, st.status, p.Status)
	assert.Equal(t, st.retry, retryString(p.RetryAfter))
}

func retryString(s int64) string {
	if s == 0 {
		return ""
	}
	return strconv.FormatInt(s, 10)
}

// parsePolicy parses RateLimit-Policy with the strict RFC 9651 parser.
func parsePolicy(t *testing.T, h http.Header) []policyItem {
	lines := h.Values("RateLimit-Policy")
	if len(lines) == 0 {
		return nil
	}
	items, err := sftest.ParseList(lines...)
	require.NoError(t, err)
	var got []policyItem
	for _, it := range items {
		got = append(got, policyItem{name: stringValue(t, it), q: intParam(t, it, "q"), w: intParam(t, it, "w")})
	}
	return got
}

// parseLimit parses RateLimit, which must hold one item.
func parseLimit(t *testing.T, h http.Header) *limitItem {
	lines := h.Values("RateLimit")
	if len(lines) == 0 {
		return nil
	}
	items, err := sftest.ParseList(lines...)
	require.NoError(t, err)
	require.Len(t, items, 1)
	return &limitItem{name: stringValue(t, items[0]), r: intParam(t, items[0], "r"), t: intParam(t, items[0], "t")}
}

func stringValue(t *testing.T, it sftest.Item) string {
	require.Equal(t, sftest.String, it.Value.Kind, "policy names are sf-strings")
	return it.Value.Str
}

func intParam(t *testing.T, it sftest.Item, key string) int64 {
	v, ok := it.Param(key)
	require.True(t, ok, "parameter %q", key)
	require.Equal(t, sftest.Integer, v.Kind, "parameter %q", key)
	return v.Int
}

// costFromHeader charges the X-Cost header, 1 without it.
func costFromHeader(r *http.Request) int64 {
	n, err := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
	if err != nil {
		return 1
	}
	return n
}

// failingStore fails every call with err.
type failingStore struct{ err error }

func (s failingStore) Take(context.Context, []core.Decision, []string, []core.Limit, int64) ([]core.Decision, error) {
	return nil, s.err
}

// recordingStore remembers the keys it was asked for.
type recordingStore struct {
	core.Store
	mu   sync.Mutex
	keys []string
}

func (s *recordingStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.mu.Lock()
	s.keys = append(s.keys, keys...)
	s.mu.Unlock()
	return s.Store.Take(ctx, dst, keys, limits, cost)
}

func runRouteKey(t *testing.T, rt Router) {
	CheckRoute(t, rt.New, "/users/1", rt.UsersRoute)
	CheckRoute(t, rt.New, "/users/2", rt.UsersRoute)
}

// CheckRoute builds a handler with build, mounting the adapter with
// httplimit.WithRouteScope over a recording store, serves GET path and checks
// that the store was asked for the key of the route template wantRoute: the
// proof that the adapter reported that template for the request.
func CheckRoute(t *testing.T, build func(*core.Limiter, ...httplimit.Option) http.Handler, path, wantRoute string) {
	t.Helper()
	rec := &recordingStore{}
	limit := core.PerMinute(5).WithName("api")
	l := newLimiter(t, func(s core.Store) core.Store { rec.Store = s; return rec }, core.WithLimits(limit))

	w := httptest.NewRecorder()
	build(l, httplimit.WithRouteScope()).ServeHTTP(w, newRequest(step{path: path, client: alice}))

	kb, err := core.NewKeyBuilder(core.DefaultPrefix)
	require.NoError(t, err)
	assert.Equal(t, []string{kb.Key(core.Identity(wantRoute, alice), limit)}, rec.keys, "route of %s should be %q", path, wantRoute)
}

func runConcurrent(t *testing.T, rt Router) {
	const requests, burst = 50, 10
	h := rt.New(newLimiter(t, nil, core.WithLimits(core.PerMinute(burst).WithName("api"))))
	codes := make(chan int, requests)
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, newRequest(step{path: "/hello", client: alice}))
			codes <- w.Code
		})
	}
	wg.Wait()
	close(codes)
	counts := map[int]int{}
	for c := range codes {
		counts[c]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: burst, http.StatusTooManyRequests: requests - burst}, counts)
}

// FinishRoutes are the handlers of [Router.Finish], by path, for a
// framework to mount (gin.WrapF, echo.WrapHandler, or as they are).
var FinishRoutes = map[string]http.HandlerFunc{
	"/teapot": func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("short and stout"))
	},
	"/quiet": func(http.ResponseWriter, *http.Request) {},
	"/panic": func(http.ResponseWriter, *http.Request) { panic(ErrPanic) },
	"/login": func(w http.ResponseWriter, r *http.Request) {
		loginAttempts.Add(1)
		if r.Header.Get("X-Password") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("welcome"))
	},
	"/hijack":           hijack,
	"/hijack-after-200": hijackAfter200,
	"/hold": func(w http.ResponseWriter, _ *http.Request) {
		gate := make(chan struct{})
		Held <- gate
		<-gate
		_, _ = w.Write([]byte("done"))
	},
	"/stream": func(w http.ResponseWriter, _ *http.Request) {
		if err := http.NewResponseController(w).Flush(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("flushed"))
	},
}
