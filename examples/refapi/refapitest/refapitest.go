// Package refapitest checks that a server serves the reference API: the
// four examples (examples/gin, examples/echo, examples/chi,
// examples/nethttp), each a self-contained copy of it, and the demo's
// (examples/refapi, which cmd/demo drives). Each one's test runs [Run]
// through its real router, so they are proven to behave identically; the
// examples' tests also run [RunServer] on their run function.
package refapitest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
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
)

// Run serves the reference API that newHandler builds over a memory store
// whose clock never moves (no refill), with no trusted proxies, and checks
// every route's limits.
func Run(t *testing.T, newHandler func(core.Store) (http.Handler, error)) {
	frozen := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	store, err := memstore.New(memstore.WithClock(func() time.Time { return frozen }))
	require.NoError(t, err)
	h, err := newHandler(store)
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
	})
	t.Run("webhooks: sliding window per source", func(t *testing.T) {
		w := expectStatus(t, h, post("/webhooks/github", ipA, ""), http.StatusAccepted, 100)
		assert.JSONEq(t, `{"received_from":"github"}`, w.Body.String())
		assert.Equal(t, http.StatusTooManyRequests, serve(h, post("/webhooks/github", ipB, "")).Code, "per source, whatever the IP")
		assert.Equal(t, http.StatusAccepted, serve(h, post("/webhooks/stripe", ipA, "")).Code)
	})
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
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
}

func login(account, password, ip string) func() *http.Request {
	return post("/login", ip, loginForm(account, password))
}

func loginForm(account, password string) string {
	return url.Values{"account": {account}, "password": {password}}.Encode()
}
