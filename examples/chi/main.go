// Command chi serves the reference API (see examples/refapi) with chi: a
// limiter per route with r.With.
//
//	go run ./examples/chi                      # memory store, 127.0.0.1:8080
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/chi
package main

import (
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"

	ratelimitchi "github.com/ratelimitkit/ratelimit/adapters/chi"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
)

func main() {
	log.Fatal(refapi.Serve("chi", newRouter))
}

// newRouter wires the reference API's routes and limiters.
func newRouter(p *refapi.Policy) http.Handler {
	r := chi.NewRouter()
	r.Get("/healthz", refapi.Healthz)
	r.With(ratelimitchi.New(p.API, p.APIOptions...)).Get("/api/hello", refapi.Hello)
	r.With(ratelimitchi.New(p.Login, p.LoginOptions...)).Post("/login", refapi.Login)
	r.With(ratelimitchi.New(p.Webhook, p.WebhookOptions...)).Post("/webhooks/{source}", refapi.Webhook)
	return r
}
