package ratelimitprom_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

// operationsDoc is the document whose Metrics reference section describes
// the package.
const operationsDoc = "../../docs/operations.md"

// promtool returns the path of Prometheus's promtool. The tests that need
// it skip with -short and fail without it otherwise, so that CI cannot pass
// them silently.
func promtool(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs promtool; skipped with -short")
	}
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool (Prometheus's linter) is not on PATH: %v\n"+
			"  Debian/Ubuntu: apt-get install -y --no-install-recommends prometheus   (ships /usr/bin/promtool)\n"+
			"  macOS:         brew install prometheus\n"+
			"  or run the tests with -short to skip the ones that need it", err)
	}
	return path
}

// runPromtool runs promtool with args and stdin, and fails t with its
// output unless it exits 0 (promtool exits non-zero on any finding).
func runPromtool(t *testing.T, stdin []byte, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
}

// populated returns a registry holding a Collector built with opts that has
// a series of every metric and label value the package exports: requests
// of every result, store calls of every result, breaker transitions, a
// lease in flight, active controls, a lockout, reloads of both results.
func populated(t *testing.T, opts ...ratelimitprom.Option) *prometheus.Registry {
	t.Helper()
	metrics := ratelimitprom.MustNew(opts...)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(metrics))

	perSecond := core.PerSecond(1).WithName("per-second")
	results := []core.Result{
		{Allowed: true},                 // allowed
		{Allowed: false},                // denied
		{Allowed: true, Shadowed: true}, // shadow_denied
		{Allowed: true, Degraded: true, Err: core.ErrStoreUnavailable},  // degraded_allowed
		{Allowed: false, Degraded: true, Err: core.ErrStoreUnavailable}, // degraded_denied
	}
	for _, flags := range results {
		res := core.NewResult(core.Decision{Allowed: flags.Allowed && !flags.Shadowed, Limit: perSecond})
		res.Allowed, res.Shadowed, res.Degraded, res.Err = flags.Allowed, flags.Shadowed, flags.Degraded, flags.Err
		res.Tier = "free"
		metrics.Decided(context.Background(), core.Request{Identity: "c", Cost: 1, Route: "/users/:id"}, res)
	}

	clk := storetest.NewClock()
	for _, err := range []error{nil, core.ErrStoreUnavailable, errors.New("ERR script error")} { // ok, unavailable, error
		s := metrics.InstrumentStoreWithClock(slowStore{err: err, took: time.Millisecond, clk: clk}, clk.Now)
		_, gotErr := s.Take(context.Background(), nil, []string{"k"}, []core.Limit{perSecond}, 1)
		require.ErrorIs(t, gotErr, err)
	}

	l, err := core.NewLimiter(newMemstore(t, clk), core.WithLimits(core.Concurrent(2).WithName("exports")), core.WithObserver(metrics))
	require.NoError(t, err)
	held, err := l.Take(context.Background(), core.Request{Identity: "c", Cost: 1, Route: "/export"})
	require.NoError(t, err)
	require.NotNil(t, held.Lease, "a lease in flight: ratelimit_in_flight has a series")

	metrics.ControlsActive(2, 1)
	metrics.Controlled(context.Background(), core.ControlEvent{Kind: core.ControlLockedOut, Identity: "c", Tier: "login", Limits: []string{"attempts"}})
	metrics.Controlled(context.Background(), core.ControlEvent{Kind: core.ControlReloaded})
	metrics.Controlled(context.Background(), core.ControlEvent{Kind: core.ControlReloadFailed, Err: errors.New("bad")})

	metrics.BreakerChanged(core.BreakerClosed, core.BreakerOpen)
	metrics.BreakerChanged(core.BreakerOpen, core.BreakerHalfOpen)
	metrics.BreakerChanged(core.BreakerHalfOpen, core.BreakerClosed)
	return reg
}

// scrape returns what Prometheus scrapes from reg: the text exposition
// served by promhttp.
func scrape(t *testing.T, reg prometheus.Gatherer) []byte {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).
		ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.True(t, strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain"), w.Header().Get("Content-Type"))
	return w.Body.Bytes()
}

func TestExpositionPassesPromtoolCheckMetrics(t *testing.T) {
	tests := []struct {
		name string
		opts []ratelimitprom.Option
	}{
		{"defaults", nil},
		{"WithConstLabels(limiter=login)", []ratelimitprom.Option{ratelimitprom.WithConstLabels(prometheus.Labels{"limiter": "login"})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := scrape(t, populated(t, tt.opts...))
			for _, name := range []string{"ratelimit_requests_total counter", "ratelimit_store_duration_seconds histogram",
				"ratelimit_breaker_state gauge", "ratelimit_breaker_transitions_total counter", "ratelimit_in_flight gauge",
				"ratelimit_active_overrides gauge", "ratelimit_active_blocks gauge", "ratelimit_lockouts_total counter",
				"ratelimit_policy_reloads_total counter"} {
				require.Contains(t, string(text), "# TYPE "+name+"\n", "the exposition must hold every metric")
			}
			for _, result := range []string{ratelimitprom.ResultAllowed, ratelimitprom.ResultDenied,
				ratelimitprom.ResultShadowDenied, ratelimitprom.ResultDegradedAllowed, ratelimitprom.ResultDegradedDenied,
				ratelimitprom.StoreOK, ratelimitprom.StoreUnavailable, ratelimitprom.StoreError,
				ratelimitprom.ReloadOK, ratelimitprom.ReloadFailed} {
				require.Contains(t, string(text), `result="`+result+`"`, "the exposition must hold every result")
			}

			runPromtool(t, text, "check", "metrics")
		})
	}
}

func TestAlertRulesPassPromtool(t *testing.T) {
	t.Run("promtool check rules", func(t *testing.T) {
		runPromtool(t, nil, "check", "rules", filepath.Join("testdata", "alerts.yml"))
	})
	t.Run("promtool test rules", func(t *testing.T) {
		runPromtool(t, nil, "test", "rules", filepath.Join("testdata", "alerts_test.yml"))
	})
}

func TestOperationsDocQueriesArePromQL(t *testing.T) {
	var queries []string
	for _, block := range docBlocks(t, "promql") {
		queries = append(queries, promqlExprs(block)...)
	}
	require.NotEmpty(t, queries, "the Metrics reference has a promql block")

	var rules strings.Builder
	rules.WriteString("groups:\n  - name: operations-doc\n    rules:\n")
	for i, q := range queries {
		fmt.Fprintf(&rules, "      - record: doc:query_%d\n        expr: |\n", i+1)
		for _, line := range strings.Split(q, "\n") {
			fmt.Fprintf(&rules, "          %s\n", line)
		}
	}
	path := filepath.Join(t.TempDir(), "doc_queries.yml")
	require.NoError(t, os.WriteFile(path, []byte(rules.String()), 0o600))

	runPromtool(t, nil, "check", "rules", path)
}

func TestOperationsDocAlertsAreTheTestedRules(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "alerts.yml"))
	require.NoError(t, err)
	blocks := docBlocks(t, "yaml")
	require.Len(t, blocks, 1, "the Metrics reference has one yaml block: the alerts")
	assert.Equal(t, string(want), blocks[0], "docs/operations.md's alerts must be testdata/alerts.yml")
}

// docBlocks returns the fenced code blocks of language lang in the
// "Metrics reference" section of the operations doc.
func docBlocks(t *testing.T, lang string) []string {
	t.Helper()
	doc, err := os.ReadFile(operationsDoc)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "\n## Metrics reference\n")
	require.True(t, ok, "no Metrics reference section in %s", operationsDoc)
	section, _, _ = strings.Cut(section, "\n## ")

	var blocks []string
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "\n```"+lang+"\n")
		if !ok {
			return blocks
		}
		block, tail, ok := strings.Cut(after, "\n```\n")
		require.True(t, ok, "unterminated %s block", lang)
		blocks, rest = append(blocks, block+"\n"), tail
	}
}

// promqlExprs splits a promql block into its expressions: runs of lines
// that are neither blank nor comments.
func promqlExprs(block string) []string {
	var exprs, cur []string
	flush := func() {
		if len(cur) > 0 {
			exprs, cur = append(exprs, strings.Join(cur, "\n")), nil
		}
	}
	for _, line := range strings.Split(block, "\n") {
		if trimmed := strings.TrimSpace(line); trimmed == "" || strings.HasPrefix(trimmed, "#") {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return exprs
}
