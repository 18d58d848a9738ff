// Command nethttp serves the reference API (see examples/refapi) with
// net/http's ServeMux: a limiter per route, mounted around the handler.
//
//	go run ./examples/nethttp                     # memory store, 127.0.0.1:8080
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/nethttp
package main

import (
	"log"
	"net/http"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
)

func main() {
	log.Fatal(refapi.Serve("net/http", newRouter))
}

// newRouter wires the reference API's routes and limiters.
func newRouter(p *refapi.Policy) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", refapi.Healthz)
	mux.Handle("GET /api/hello", ratelimithttp.New(p.API, p.APIOptions...)(http.HandlerFunc(refapi.Hello)))
	mux.Handle("POST /login", ratelimithttp.New(p.Login, p.LoginOptions...)(http.HandlerFunc(refapi.Login)))
	mux.Handle("POST /webhooks/{source}", ratelimithttp.New(p.Webhook, p.WebhookOptions...)(http.HandlerFunc(refapi.Webhook)))
	return mux
}
