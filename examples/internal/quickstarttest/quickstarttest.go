// Package quickstarttest checks the quick starts (examples/gin,
// examples/echo, examples/chi, examples/nethttp) through their real
// routers: one limit per client, the client being its API key (hashed in
// the store) or else its address, over the memory store or, with a Redis
// URL, a real Redis server.
package quickstarttest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/internal/pgtest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// A StoreFunc is a quick start's newStore: the memory store for "", the
// PostgreSQL store at a postgres:// URL, else the Redis store at the
// redis:// URL.
type StoreFunc = func(redisURL string) (core.Store, error)

// A HandlerFunc is a quick start's router over store.
type HandlerFunc = func(store core.Store) http.Handler

// burst is how many requests a client may send at one instant.
const burst = 20

// secret is an API key that must never appear in a store key.
const secret = "quickstart-secret-api-key"

// Run checks the quick start whose store newStore opens and whose router
// newHandler builds. Its Redis case starts a redis-server of its own
// (skipped under go test -short): the caller's TestMain runs redistest.Main.
func Run(t *testing.T, newStore StoreFunc, newHandler HandlerFunc) {
	t.Run("a burst of 20 per client, then 429 with Retry-After", func(t *testing.T) {
		frozen := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		store, err := memstore.New(memstore.WithClock(func() time.Time { return frozen }))
		require.NoError(t, err)
		runLimits(t, newHandler(store))
	})
	t.Run("no REDIS_URL: the memory store", func(t *testing.T) {
		store, err := newStore("")
		require.NoError(t, err)
		assert.IsType(t, &memstore.Store{}, store)
	})
	t.Run("a REDIS_URL that is not one: an error", func(t *testing.T) {
		_, err := newStore("http://127.0.0.1:6379")
		assert.Error(t, err)
	})
	t.Run("REDIS_URL: the limits live in Redis, the API key hashed", func(t *testing.T) {
		runRedis(t, newStore, newHandler)
	})
	t.Run("DATABASE_URL: the limits live in PostgreSQL, the API key hashed", func(t *testing.T) {
		runPostgres(t, newStore, newHandler)
	})
}

func runLimits(t *testing.T, h http.Handler) {
	w := serve(h, "198.51.100.1", "")
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "hello", strings.TrimSpace(w.Body.String()))
	for i := 1; i < burst; i++ {
		require.Equal(t, http.StatusOK, serve(h, "198.51.100.1", "").Code, "request %d", i+1)
	}
	w = serve(h, "198.51.100.1", "")
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"), "10 a second: one comes back within 100 ms, rounded up")
	for i := range burst {
		require.Equal(t, http.StatusOK, serve(h, "198.51.100.1", "key-1").Code, "an API key has its own quota: request %d", i+1)
	}
	assert.Equal(t, http.StatusTooManyRequests, serve(h, "198.51.100.1", "key-1").Code, "key-1 spent")
	assert.Equal(t, http.StatusOK, serve(h, "198.51.100.1", "key-2").Code, "another key behind the same address")
	assert.Equal(t, http.StatusOK, serve(h, "198.51.100.2", "").Code, "another address")
	assert.Equal(t, http.StatusTooManyRequests, serve(h, "198.51.100.2", "key-1").Code, "key-1 is key-1 from any address")
}

func runRedis(t *testing.T, newStore StoreFunc, newHandler HandlerFunc) {
	srv := redistest.Dedicated(t)
	store, err := newStore("redis://" + srv.Addr() + "/0")
	require.NoError(t, err)
	w := serve(newHandler(store), "198.51.100.1", secret)
	require.Equal(t, http.StatusOK, w.Code)
	assert.NotEmpty(t, w.Header().Get("RateLimit"))
	keys := redistest.ScanKeys(t, srv.Client(t), "*")
	require.Len(t, keys, 1, "one limit of one client")
	assert.NotContains(t, keys[0], secret)
}

// runPostgres checks a quick start on the test server's database, in the
// store's default table: one request, whose row holds no API key. The
// quick starts share the table and the client, so it checks no quota.
func runPostgres(t *testing.T, newStore StoreFunc, newHandler HandlerFunc) {
	pgtest.Pool(t, 1) // the server answers, or t fails saying how to get one
	store, err := newStore(pgtest.URL())
	require.NoError(t, err)
	s, ok := store.(*pgstore.Store)
	require.True(t, ok, "a %T, not a *pgstore.Store", store)
	t.Cleanup(func() { _ = s.Close() })
	w := serve(newHandler(store), "198.51.100.1", secret)
	require.Equal(t, http.StatusOK, w.Code)
	assert.NotEmpty(t, w.Header().Get("RateLimit"))
	var keys, leaked int
	require.NoError(t, pgtest.Pool(t, 1).QueryRow(context.Background(),
		`SELECT count(*), count(*) FILTER (WHERE strpos(key, $1) > 0) FROM ratelimit.state`, secret).Scan(&keys, &leaked))
	assert.Positive(t, keys, "rows in ratelimit.state")
	assert.Zero(t, leaked, "rows whose key holds the API key")
}

func serve(h http.Handler, ip, apiKey string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/hello", nil)
	r.RemoteAddr = ip + ":40000"
	if apiKey != "" {
		r.Header.Set("X-API-Key", apiKey)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}
