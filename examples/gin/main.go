// Command gin serves the reference API (see examples/refapi) with gin: a
// limiter per route, as the route's first handler.
//
//	go run ./examples/gin                      # memory store, 127.0.0.1:8080
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/gin
package main

import (
	"log"
	"net/http"

	"github.com/gin-gonic/gin"

	ratelimitgin "github.com/ratelimitkit/ratelimit/adapters/gin"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
)

func main() {
	log.Fatal(refapi.Serve("gin", newRouter))
}

// newRouter wires the reference API's routes and limiters.
func newRouter(p *refapi.Policy) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/healthz", gin.WrapF(refapi.Healthz))
	r.GET("/api/hello", ratelimitgin.New(p.API, p.APIOptions...), gin.WrapF(refapi.Hello))
	r.POST("/login", ratelimitgin.New(p.Login, p.LoginOptions...), gin.WrapF(refapi.Login))
	r.POST("/webhooks/:source", ratelimitgin.New(p.Webhook, p.WebhookOptions...), gin.WrapF(refapi.Webhook))
	return r
}
