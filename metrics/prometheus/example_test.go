package ratelimitprom_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
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

	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	handler := ratelimithttp.Handler(mux, limiter) // the adapter reports the route template
	for _, path := range []string{"/users/1", "/users/2", "/users/3"} {
		handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
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
	// ratelimit_requests_total{limit="per-minute",result="allowed",route="GET /users/{id}",tier="default"} 2
	// ratelimit_requests_total{limit="per-minute",result="denied",route="GET /users/{id}",tier="default"} 1
	// ratelimit_store_duration_seconds_count{result="ok"} 3
}
