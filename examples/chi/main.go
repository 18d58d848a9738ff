// Command chi is the quick start for chi: each client (its API key,
// else its address) may send 10 requests a second in bursts of 20, then gets
// 429 with Retry-After. The limits live in memory, or in Redis with
// REDIS_URL (redis://localhost:6379/0), or in PostgreSQL with
// DATABASE_URL (postgres://localhost/app). The production template is
// examples/production.
//
//	go run ./examples/chi
//	curl -i -H 'X-API-Key: my-key' localhost:8080/hello
package main

import (
	"cmp"
	"context"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	ratelimitchi "github.com/ratelimitkit/ratelimit/adapters/chi"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

func main() {
	store, err := newStore(cmp.Or(os.Getenv("DATABASE_URL"), os.Getenv("REDIS_URL")))
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("localhost:8080", newRouter(store)))
}

func newRouter(store core.Store) chi.Router {
	limiter := core.MustNewLimiter(store, core.WithLimits(core.PerSecond(10).WithBurst(20)))
	// API keys are hashed before they reach the store. Authenticate first, or clients invent quotas.
	byClient := keyfunc.ByAPIKeyOrIP("X-API-Key")
	r := chi.NewRouter()
	r.Use(ratelimitchi.New(limiter, httplimit.WithKey(byClient)))
	r.Get("/hello", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hello\n")) })
	return r
}

func newStore(url string) (core.Store, error) {
	switch {
	case url == "":
		return memstore.New()
	case strings.HasPrefix(url, "postgres"):
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			return nil, err
		}
		return pgstore.New(context.Background(), pool) // creates its table on first use
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	return redisstore.New(redisstore.NewClient(opts))
}
