package ratelimithttp_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// TestKeyfuncPlugsIn shows a keyfunc.Func passed to httplimit.WithKey as
// is: behind a trusted proxy, clients are told apart by X-Forwarded-For.
func TestKeyfuncPlugsIn(t *testing.T) {
	store, err := memstore.New(memstore.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	require.NoError(t, err)
	l, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(1)))
	require.NoError(t, err)
	xff := keyfunc.Must(keyfunc.XForwardedFor([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}))
	h := ratelimithttp.Handler(newMux(), l, httplimit.WithKey(xff))

	tests := []struct {
		client string
		want   int
	}{
		{"198.51.100.1", http.StatusOK},
		{"198.51.100.2", http.StatusOK},
		{"198.51.100.1", http.StatusTooManyRequests},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/hello", nil)
		r.RemoteAddr = "10.0.0.1:5000"
		r.Header.Set("X-Forwarded-For", tt.client)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, tt.want, w.Code, tt.client)
	}
}

// TestDefaultKeyMatchesPeerIP checks that core's default key and
// keyfunc.PeerIP name a client alike, so switching between them keeps
// every client's state.
func TestDefaultKeyMatchesPeerIP(t *testing.T) {
	peer := keyfunc.Must(keyfunc.PeerIP())
	for _, remote := range []string{"203.0.113.9:1", "[::ffff:203.0.113.9]:1", "[2001:db8:1:2:3::4]:1", "[fe80::1%eth0]:1", "203.0.113.9"} {
		t.Run(remote, func(t *testing.T) {
			r := &http.Request{RemoteAddr: remote}
			want, err := peer(r)
			require.NoError(t, err)
			got, err := httplimit.RemoteAddrKey(r)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}
