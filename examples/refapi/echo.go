package refapi

import (
	"context"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	ratelimitecho "github.com/ratelimitkit/ratelimit/adapters/echo"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// Echo returns the reference API on an echo server; export is the work of
// GET /api/export ([BuildExport], or a test's). Its denials carry the same
// problem+json body as the other frameworks' (httplimit.DefaultDenyHandler);
// without that option echo's WithErrorHandler renders the 429.
func Echo(p *Policy, export func(context.Context) error) http.Handler {
	limit := func(l *core.Limiter, opts []httplimit.Option) echo.MiddlewareFunc {
		return ratelimitecho.New(l, append(slices.Clip(opts), httplimit.WithDenyHandler(httplimit.DefaultDenyHandler))...)
	}
	e := echo.New()
	e.GET("/healthz", echo.WrapHandler(http.HandlerFunc(Healthz)))
	e.GET("/metrics", echo.WrapHandler(p.Metrics))
	e.GET("/api/hello", echo.WrapHandler(http.HandlerFunc(Hello)), limit(p.API, p.APIOptions))
	e.POST("/login", echo.WrapHandler(http.HandlerFunc(Login)), limit(p.Login, p.LoginOptions))
	e.POST("/webhooks/:source", echo.WrapHandler(http.HandlerFunc(Webhook)), limit(p.Webhook, p.WebhookOptions))
	e.GET("/api/export", echo.WrapHandler(Export(export)), limit(p.Export, p.ExportOptions))
	return e
}
