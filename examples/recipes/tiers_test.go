package recipes_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratelimitkit/ratelimit/examples/recipes"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// Each API key's plan comes from the database, asked once per key while
// the cache remembers it; no key and an unknown key get the free tier,
// keyed by address.
func ExampleTieredAPI() {
	lookups := 0
	accounts := map[string]string{"key-of-acme": "pro", "key-of-globex": "enterprise"} // your database
	plans := recipes.NewPlanCache(func(ctx context.Context, apiKey string) (string, error) {
		lookups++
		return accounts[apiKey], nil
	}, time.Minute, 10_000)
	limit, err := recipes.TieredAPI(storeAt(newClock()), plans, keyfunc.Must(keyfunc.PeerIP()))
	if err != nil {
		panic(err)
	}
	h := limit(ok)

	for _, key := range []string{"key-of-acme", "key-of-acme", "key-of-globex", "invented", ""} {
		r := httptest.NewRequest(http.MethodGet, "/api/hello", nil)
		r.RemoteAddr = "203.0.113.7:5000"
		if key != "" {
			r.Header.Set("X-API-Key", key)
		}
		fmt.Printf("%-16q ", key)
		serve(h, r, "RateLimit-Policy", "RateLimit")
	}
	fmt.Println("database lookups:", lookups)
	// Output:
	// "key-of-acme"    200 RateLimit-Policy: "api";q=100;w=1 RateLimit: "api";r=999;t=1
	// "key-of-acme"    200 RateLimit-Policy: "api";q=100;w=1 RateLimit: "api";r=998;t=1
	// "key-of-globex"  200 RateLimit-Policy: "api";q=1000;w=1 RateLimit: "api";r=9999;t=1
	// "invented"       200 RateLimit-Policy: "api";q=10;w=1 RateLimit: "api";r=99;t=1
	// ""               200 RateLimit-Policy: "api";q=10;w=1 RateLimit: "api";r=98;t=1
	// database lookups: 3
}
