// Package refapitest checks that a server serves the reference API
// (examples/refapi): [Run] sends the scenarios through a router built by
// the caller (refapi's test runs them through gin, echo, chi and net/http),
// and [RunServer] checks the process around it (examples/production, once
// per framework).
package refapitest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// The one login that succeeds.
const (
	account  = "alice"
	password = "correct-horse-battery-staple"
)

// Clients of the scenarios (documentation addresses).
const (
	ipA = "198.51.100.1"
	ipB = "198.51.100.2"
	ipC = "198.51.100.3"
	ipD = "198.51.100.4"
)

// An ExportFunc is the work of GET /api/export: about 300 ms in the
// servers, returning early with ctx's error when the client gives up. Each
// server takes it as a parameter so that [Run] can hold its requests in
// the handler for as long as a scenario needs, with no sleep.
type ExportFunc = func(ctx context.Context) error

// exportWithin bounds every wait of the export scenario; it is a guard
// against a hang, never reached when the server works.
const exportWithin = 10 * time.Second

// Run serves the reference API that newHandler builds over a memory store
// whose clock never moves (no refill), with no trusted proxies, and checks
// every route's limits. newHandler must make GET /api/export call export
// in place of its 300 ms of work.
func Run(t *testing.T, newHandler func(store core.Store, export ExportFunc) (http.Handler, error)) {
	frozen := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	store, err := memstore.New(memstore.WithClock(func() time.Time { return frozen }))
	require.NoError(t, err)
	held := make(chan chan struct{})
	h, err := newHandler(store, holdExport(held))
	require.NoError(t, err)

	t.Run("healthz is never limited", func(t *testing.T) {
		for i := range 300 {
			require.Equal(t, http.StatusOK, serve(h, get("/healthz", ipA, "")).Code, "request %d", i+1)
		}
	})
	t.Run("free tier per IP: burst 100, then 429 with Retry-After", func(t *testing.T) {
		expectStatus(t, h, get("/api/hello", ipA, ""), http.StatusOK, 100)
		w := serve(h, get("/api/hello", ipA, ""))
		assert.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, "1", w.Header().Get("Retry-After"))
		assert.Equal(t, `"burst";q=10;w=1, "daily";q=1000;w=86400`, w.Header().Get("RateLimit-Policy"))
		assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	})
	t.Run("an unknown API key counts as no key", func(t *testing.T) {
		assert.Equal(t, http.StatusTooManyRequests, serve(h, get("/api/hello", ipA, "made-up-key")).Code)
	})
	t.Run("known keys behind the same IP have their own quota", func(t *testing.T) {
		expectStatus(t, h, get("/api/hello", ipA, "free-demo-key-1"), http.StatusOK, 100)
		assert.Equal(t, http.StatusTooManyRequests, serve(h, get("/api/hello", ipA, "free-demo-key-1")).Code)
		assert.Equal(t, http.StatusOK, serve(h, get("/api/hello", ipA, "free-demo-key-2")).Code)
	})
	t.Run("pro tier: burst 1000", func(t *testing.T) {
		w := expectStatus(t, h, get("/api/hello", ipA, "pro-demo-key"), http.StatusOK, 1000)
		assert.Equal(t, `"burst";q=100;w=1, "daily";q=100000;w=86400`, w.Header().Get("RateLimit-Policy"))
		assert.Equal(t, http.StatusTooManyRequests, serve(h, get("/api/hello", ipA, "pro-demo-key")).Code)
	})
	t.Run("enterprise tier: burst 10000", func(t *testing.T) {
		w := serve(h, get("/api/hello", ipA, "enterprise-demo-key"))
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, `"burst";q=1000;w=1, "daily";q=10000000;w=86400`, w.Header().Get("RateLimit-Policy"))
	})
	t.Run("login: 5 failed logins per minute per account and IP", func(t *testing.T) {
		w := expectStatus(t, h, login(account, password, ipB), http.StatusOK, 7)
		assert.Equal(t, `"login";r=5;t=0`, w.Header().Get("RateLimit"), "successful logins are not counted")
		expectStatus(t, h, login(account, "guess", ipB), http.StatusUnauthorized, 5)
		w = serve(h, login(account, password, ipB))
		assert.Equal(t, http.StatusTooManyRequests, w.Code, "even the right password waits")
		assert.Equal(t, "60", w.Header().Get("Retry-After"), "sliding log: all five attempts came at one instant, so the oldest leaves the window 60 s later")
		assert.Equal(t, http.StatusUnauthorized, serve(h, login("bob", "guess", ipB)).Code, "another account")
		assert.Equal(t, http.StatusOK, serve(h, login(account, password, ipC)).Code, "another IP")
		notJSON := post("/login", ipC, `{"account": "carol", "password": `)
		assert.Equal(t, http.StatusBadRequest, serve(h, notJSON).Code, "the body is JSON, as the docs send it")
	})
	t.Run("webhooks: sliding window per source", func(t *testing.T) {
		w := expectStatus(t, h, post("/webhooks/github", ipA, ""), http.StatusAccepted, 100)
		assert.JSONEq(t, `{"received_from":"github"}`, w.Body.String())
		assert.Equal(t, http.StatusTooManyRequests, serve(h, post("/webhooks/github", ipB, "")).Code, "per source, whatever the IP")
		assert.Equal(t, http.StatusAccepted, serve(h, post("/webhooks/stripe", ipA, "")).Code)
	})
	t.Run("export: 2 in flight per client, the others 429 until one ends", func(t *testing.T) {
		runExport(t, h, held)
	})
}

// holdExport is the export work of [Run]: each request sends a gate on
// held when it reaches the handler's work, then waits until the gate is
// closed (or the request is cancelled).
func holdExport(held chan<- chan struct{}) ExportFunc {
	return func(ctx context.Context) error {
		gate := make(chan struct{})
		select {
		case held <- gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// runExport fires 5 exports of one client at once while the work is held:
// 2 reach the work, 3 are denied before it; another client has places of
// its own, and once the two end the client's next export passes.
func runExport(t *testing.T, h http.Handler, held chan chan struct{}) {
	done := make(chan *httptest.ResponseRecorder, 5)
	for range 5 {
		go func() { done <- serve(h, exportOf(t, ipD)) }()
	}
	var gates []chan struct{}
	var denied []*httptest.ResponseRecorder
	for len(gates)+len(denied) < 5 {
		select {
		case gate := <-held:
			gates = append(gates, gate)
		case w := <-done:
			denied = append(denied, w)
		case <-time.After(exportWithin):
			t.Fatalf("after %s: %d exports in their work, %d answered, of 5", exportWithin, len(gates), len(denied))
		}
	}
	require.Equal(t, 2, len(gates), "exports of one client running at once")
	for i, w := range denied {
		assert.Equal(t, http.StatusTooManyRequests, w.Code, "denied export %d", i+1)
		retry, err := strconv.Atoi(w.Header().Get("Retry-After"))
		assert.NoError(t, err, "Retry-After in whole seconds")
		assert.GreaterOrEqual(t, retry, 1, "Retry-After")
		assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
		var problem struct{ Status int }
		assert.NoError(t, json.Unmarshal(w.Body.Bytes(), &problem), "a problem+json body")
		assert.Equal(t, http.StatusTooManyRequests, problem.Status)
	}

	other := startExport(t, h, held, ipB)
	assert.Equal(t, http.StatusOK, other().Code, "another client is not limited by the first one's exports")
	for _, gate := range gates {
		close(gate)
	}
	for i := range gates {
		w := waitExport(t, done)
		assert.Equal(t, http.StatusOK, w.Code, "held export %d", i+1)
		assert.JSONEq(t, `{"status":"exported"}`, w.Body.String())
	}
	next := startExport(t, h, held, ipD)
	assert.Equal(t, http.StatusOK, next().Code, "the leases were released when the exports ended")
}

// startExport sends one export of ip and waits until it reaches the work;
// the function it returns lets the work end and returns the response.
func startExport(t *testing.T, h http.Handler, held chan chan struct{}, ip string) func() *httptest.ResponseRecorder {
	t.Helper()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- serve(h, exportOf(t, ip)) }()
	select {
	case gate := <-held:
		return func() *httptest.ResponseRecorder { close(gate); return waitExport(t, done) }
	case w := <-done:
		t.Fatalf("an export of %s did not reach its work: %d %s", ip, w.Code, w.Body)
	case <-time.After(exportWithin):
		t.Fatalf("an export of %s neither ran nor was answered within %s", ip, exportWithin)
	}
	return nil
}

// exportOf is an export of ip whose context ends with the test, so that a
// failed test leaves no request held.
func exportOf(t *testing.T, ip string) func() *http.Request {
	return func() *http.Request { return get("/api/export", ip, "")().WithContext(t.Context()) }
}

func waitExport(t *testing.T, done <-chan *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	t.Helper()
	select {
	case w := <-done:
		return w
	case <-time.After(exportWithin):
		t.Fatalf("an export did not end within %s of its release", exportWithin)
		return nil
	}
}

// expectStatus serves n copies of r and requires status for each; it
// returns the last response.
func expectStatus(t *testing.T, h http.Handler, r func() *http.Request, status, n int) *httptest.ResponseRecorder {
	t.Helper()
	var w *httptest.ResponseRecorder
	for i := range n {
		w = serve(h, r)
		require.Equal(t, status, w.Code, "request %d of %d", i+1, n)
	}
	return w
}

func serve(h http.Handler, r func() *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r())
	return w
}

func get(path, ip, apiKey string) func() *http.Request {
	return func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.RemoteAddr = ip + ":40000"
		if apiKey != "" {
			r.Header.Set("X-API-Key", apiKey)
		}
		return r
	}
}

func post(path, ip, body string) func() *http.Request {
	return func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.RemoteAddr = ip + ":40000"
		r.Header.Set("Content-Type", "application/json")
		return r
	}
}

func login(account, password, ip string) func() *http.Request {
	return post("/login", ip, loginJSON(account, password))
}

// loginJSON is the body of a login, as the docs send it.
func loginJSON(account, password string) string {
	b, err := json.Marshal(map[string]string{"account": account, "password": password})
	if err != nil {
		panic(err)
	}
	return string(b)
}
