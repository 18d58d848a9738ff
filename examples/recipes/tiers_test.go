package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/ratelimitkit/ratelimit/examples/recipes"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// Each API key's plan comes from the database, asked once per key while
// the limiter's cache remembers it; no key and an unknown key get the free
// tier, keyed by address. While the database is down, a known key keeps
// its plan; a denied address inventing keys costs it almost nothing.
func ExampleTieredAPI() {
	var lookups atomic.Int64
	var down atomic.Bool
	accounts := map[string]string{"key-of-acme": "pro", "key-of-globex": "enterprise"} // your database
	plan := func(ctx context.Context, apiKey string) (string, error) {
		lookups.Add(1)
		if down.Load() {
			return "", errors.New("plans: connection refused")
		}
		return accounts[apiKey], nil
	}
	clock := newClock()
	limit, err := recipes.TieredAPI(storeAt(clock), plan, keyfunc.Must(keyfunc.PeerIP()))
	if err != nil {
		panic(err)
	}
	h := limit(ok)
	request := func(addr, key string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api/hello", nil)
		r.RemoteAddr = addr + ":5000"
		if key != "" {
			r.Header.Set("X-API-Key", key)
		}
		return r
	}

	for _, key := range []string{"key-of-acme", "key-of-acme", "key-of-globex", "invented", ""} {
		fmt.Printf("%-16q ", key)
		serve(h, request("203.0.113.7", key), "RateLimit-Policy", "RateLimit")
	}
	fmt.Println("database lookups:", lookups.Load())

	down.Store(true)
	clock.Advance(2 * time.Minute) // past the cache's TTL
	fmt.Print("database down:   ")
	serve(h, request("203.0.113.7", "key-of-acme"), "RateLimit-Policy")

	down.Store(false)
	lookups.Store(0)
	statuses := map[int]int{}
	for i := range 1_000 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request("198.51.100.9", fmt.Sprintf("invented-%d", i)))
		statuses[w.Code]++
	}
	fmt.Printf("1000 invented keys from one address: %d × 200, %d × 429, %d database lookups\n",
		statuses[http.StatusOK], statuses[http.StatusTooManyRequests], lookups.Load())
	// Output:
	// "key-of-acme"    200 RateLimit-Policy: "api";q=100;w=1 RateLimit: "api";r=999;t=1
	// "key-of-acme"    200 RateLimit-Policy: "api";q=100;w=1 RateLimit: "api";r=998;t=1
	// "key-of-globex"  200 RateLimit-Policy: "api";q=1000;w=1 RateLimit: "api";r=9999;t=1
	// "invented"       200 RateLimit-Policy: "api";q=10;w=1 RateLimit: "api";r=99;t=1
	// ""               200 RateLimit-Policy: "api";q=10;w=1 RateLimit: "api";r=98;t=1
	// database lookups: 3
	// database down:   200 RateLimit-Policy: "api";q=100;w=1
	// 1000 invented keys from one address: 100 × 200, 900 × 429, 109 database lookups
}
