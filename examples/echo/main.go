// Command echo serves the reference API (see examples/refapi) with echo: a
// limiter per route, as route middleware.
//
//	go run ./examples/echo                     # memory store, 127.0.0.1:8080
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/echo
package main

import (
	"log"
	"net/http"

	"github.com/labstack/echo/v4"

	ratelimitecho "github.com/ratelimitkit/ratelimit/adapters/echo"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
)

func main() {
	log.Fatal(refapi.Serve("echo", newRouter))
}

// newRouter wires the reference API's routes and limiters.
func newRouter(p *refapi.Policy) http.Handler {
	e := echo.New()
	e.HideBanner = true
	// The core problem+json body on denials, as the other frameworks send;
	// without it echo's HTTPErrorHandler renders the 429.
	deny := core.WithDenyHandler(core.DefaultDenyHandler)
	e.GET("/healthz", echo.WrapHandler(http.HandlerFunc(refapi.Healthz)))
	e.GET("/api/hello", echo.WrapHandler(http.HandlerFunc(refapi.Hello)), ratelimitecho.New(p.API, append(p.APIOptions, deny)...))
	e.POST("/login", echo.WrapHandler(http.HandlerFunc(refapi.Login)), ratelimitecho.New(p.Login, append(p.LoginOptions, deny)...))
	e.POST("/webhooks/:source", echo.WrapHandler(http.HandlerFunc(refapi.Webhook)), ratelimitecho.New(p.Webhook, append(p.WebhookOptions, deny)...))
	return e
}
