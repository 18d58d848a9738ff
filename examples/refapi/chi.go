package refapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	ratelimitchi "github.com/ratelimitkit/ratelimit/adapters/chi"
)

// Chi returns the reference API on a chi router; export is the work of
// GET /api/export ([BuildExport], or a test's).
func Chi(p *Policy, export func(context.Context) error) http.Handler {
	r := chi.NewRouter()
	r.Get("/healthz", Healthz)
	r.Method(http.MethodGet, "/metrics", p.Metrics)
	r.With(ratelimitchi.New(p.API, p.APIOptions...)).Get("/api/hello", Hello)
	r.With(ratelimitchi.New(p.Login, p.LoginOptions...)).Post("/login", Login)
	r.With(ratelimitchi.New(p.Webhook, p.WebhookOptions...)).Post("/webhooks/{source}", Webhook)
	r.With(ratelimitchi.New(p.Export, p.ExportOptions...)).Get("/api/export", Export(export))
	return r
}
