package recipes_test

import (
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ratelimitkit/ratelimit/examples/recipes"
)

// delivery returns a delivery of n events from source.
func delivery(source string, n int) *http.Request {
	body := "[" + strings.Repeat(`{"event":"delivered"},`, n-1) + `{"event":"delivered"}]`
	return httptest.NewRequest(http.MethodPost, "/webhooks/"+source, strings.NewReader(body))
}

// A sender flushes a backlog of 5,000 events in batches of 1,000: all are
// taken at once, the next batch waits 100 s (1,000 events at 10/s). Other
// senders have their own quota. A batch larger than the burst can never
// pass: 413, not a Retry-After that would not help.
func ExampleWebhooks() {
	limit, err := recipes.Webhooks(storeAt(newClock()))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /webhooks/{source}", limit(ok))

	for range 6 {
		serve(mux, delivery("sendgrid", 1000), "RateLimit", "Retry-After")
	}
	serve(mux, delivery("github", 1), "RateLimit")
	serve(mux, delivery("segment", 6000), "Retry-After")
	// Output:
	// 200 RateLimit: "events";r=4000;t=1
	// 200 RateLimit: "events";r=3000;t=1
	// 200 RateLimit: "events";r=2000;t=1
	// 200 RateLimit: "events";r=1000;t=1
	// 200 RateLimit: "events";r=0;t=1
	// 429 RateLimit: "events";r=0;t=100 Retry-After: 100
	// 200 RateLimit: "events";r=4999;t=1
	// 413
}
