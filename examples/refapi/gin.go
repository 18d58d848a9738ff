package refapi

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	ratelimitgin "github.com/ratelimitkit/ratelimit/adapters/gin"
)

// Gin returns the reference API on a gin engine; export is the work of
// GET /api/export ([BuildExport], or a test's).
func Gin(p *Policy, export func(context.Context) error) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/healthz", gin.WrapF(Healthz))
	r.GET("/metrics", gin.WrapH(p.Metrics))
	r.GET("/api/hello", ratelimitgin.New(p.API, p.APIOptions...), gin.WrapF(Hello))
	r.POST("/login", ratelimitgin.New(p.Login, p.LoginOptions...), gin.WrapF(Login))
	r.POST("/webhooks/:source", ratelimitgin.New(p.Webhook, p.WebhookOptions...), gin.WrapF(Webhook))
	r.GET("/api/export", ratelimitgin.New(p.Export, p.ExportOptions...), gin.WrapF(Export(export)))
	return r
}
