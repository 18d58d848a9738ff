package refapi

import (
	"context"
	"net/http"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
)

// NetHTTP returns the reference API on net/http's ServeMux; export is the
// work of GET /api/export ([BuildExport], or a test's).
func NetHTTP(p *Policy, export func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", Healthz)
	mux.Handle("GET /metrics", p.Metrics)
	mux.Handle("GET /api/hello", ratelimithttp.New(p.API, p.APIOptions...)(http.HandlerFunc(Hello)))
	mux.Handle("POST /login", ratelimithttp.New(p.Login, p.LoginOptions...)(http.HandlerFunc(Login)))
	mux.Handle("POST /webhooks/{source}", ratelimithttp.New(p.Webhook, p.WebhookOptions...)(http.HandlerFunc(Webhook)))
	mux.Handle("GET /api/export", ratelimithttp.New(p.Export, p.ExportOptions...)(Export(export)))
	return mux
}
