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
	"github.com/ratelimitkit/ratelimit/keyfunc"
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

// A client past its free tier's burst gets an override halfway through a
// run and is then admitted at its full rate; the brute-forcer, still
// guessing after its limit, is locked out (problem type "locked-out").
// The margins allow a loaded machine: the raised client sends 80/s, of
// which the free tier admits at most about 30 in its second second, all
// when raised.
func TestReportsTheOverrideAndTheLockout(t *testing.T) {
	store, err := memstore.New()
	require.NoError(t, err)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	p, err := refapi.New(store, refapi.Config{TrustedProxies: loopback, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(refapi.NetHTTP(p, refapi.BuildExport))
	defer srv.Close()
	key, err := keyfunc.XForwardedFor(loopback)
	require.NoError(t, err)

	all := scenario()
	groups := []group{all[3], raised(2*time.Second, p.API, identityOf(key))}
	require.Contains(t, groups[0].name, "brute-forcer")
	tallies := drive(context.Background(), srv.URL, 5*time.Second, groups)
	var out bytes.Buffer
	report(&out, groups, tallies, 5)

	raisedT := tallies[1]
	assert.Positive(t, raisedT.limited[1], "denied past the free tier's burst before the override")
	assert.GreaterOrEqual(t, raisedT.allowed[3]+raisedT.allowed[4], 120, "admitted at about 80/s after it")
	assert.Contains(t, out.String(), "at 2s: override: burst 100/s (burst 1000) for "+raisedIP+", by Limiter.SetOverride\n")
	assert.Contains(t, out.String(), "brute-forcer, locked out (10 denials within a minute: 30s, doubling): HTTP 429")
	assert.Contains(t, out.String(), `"type":"https://github.com/ratelimitkit/ratelimit/blob/main/docs/headers.md#locked-out"`)
}
