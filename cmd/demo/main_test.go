package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
)

// The exporter's row: of 5 exports sent at once, 2 run and 3 get 429. The
// exports are held in their work until the 3 denials are answered, so the
// count does not depend on how fast the machine is.
func TestReportsTheExporter(t *testing.T) {
	store, err := memstore.New()
	require.NoError(t, err)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	p, err := refapi.New(store, refapi.Config{TrustedProxies: loopback, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	var denials atomic.Int32
	allDenied := make(chan struct{})
	held := func(ctx context.Context) error {
		select {
		case <-allDenied:
			return nil
		case <-ctx.Done(): // the server is wrong: the client's timeout ends it
			return ctx.Err()
		}
	}
	router := refapi.NetHTTP(p, held)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		router.ServeHTTP(rec, r)
		if rec.status == http.StatusTooManyRequests && denials.Add(1) == 3 {
			close(allDenied)
		}
	}))
	defer srv.Close()

	groups := []group{exporter()}
	tallies := drive(context.Background(), srv.URL, time.Second, groups)
	assert.Equal(t, []int{2}, tallies[0].allowed, "exports that ran")
	assert.Equal(t, []int{3}, tallies[0].limited, "exports denied")
	var out bytes.Buffer
	report(&out, groups, tallies, 1)
	assert.Regexp(t, `exporter, 5 exports at once \(2 in flight\)\s+2/3\s+2/3`, out.String())
	assert.Contains(t, out.String(), "exporter, first 429 (at most 2 exports in flight per client): HTTP 429")
	assert.Contains(t, out.String(), `RateLimit-Policy: "export";q=2;qu="concurrency"`)
	assert.Contains(t, out.String(), "Retry-After: 1")
	assert.Contains(t, out.String(), "Content-Type: application/problem+json")
}

// statusRecorder records the status a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}
