package ratelimitprom_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

func Example() {
	metrics := ratelimitprom.MustNew()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)

	store, _ := memstore.New()
	limiter := core.MustNewLimiter(metrics.InstrumentStore(store),
		core.WithLimits(core.PerMinute(2).WithName("per-minute")),
		core.WithObserver(metrics))

	// The route template the request matched; adapters know it.
	ctx := ratelimitprom.WithRoute(context.Background(), "/users/{id}")
	for range 3 {
		_, _ = limiter.Allow(ctx, "203.0.113.7")
	}

	// What Prometheus scrapes from promhttp.HandlerFor(reg, ...).
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	lines := bufio.NewScanner(rec.Body)
	for lines.Scan() {
		if line := lines.Text(); strings.HasPrefix(line, "ratelimit_requests_total") ||
			strings.HasPrefix(line, "ratelimit_store_duration_seconds_count") {
			fmt.Println(line)
		}
	}
	// Output:
	// ratelimit_requests_total{limit="per-minute",result="allowed",route="/users/{id}",tier="default"} 2
	// ratelimit_requests_total{limit="per-minute",result="denied",route="/users/{id}",tier="default"} 1
	// ratelimit_store_duration_seconds_count{result="ok"} 3
}
