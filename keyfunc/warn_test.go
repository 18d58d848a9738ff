package keyfunc

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/logtest"
	"github.com/ratelimitkit/ratelimit/internal/proxyhint"
)

// A proxy header from a peer outside the trusted prefixes is the mark of a
// proxy missing from the list (every client then shares its quota) or of
// a spoofing client: the Func warns once, and names the peer only when it
// is a private address.
func TestProxyHeaderFromAnUntrustedPeerWarnsOnce(t *testing.T) {
	buf := logtest.CaptureDefault(t, slog.LevelInfo)
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}

	tests := []struct {
		name, peer, peerInLog string
	}{
		{"a proxy missing from the list", "192.168.1.5:80", "peer=192.168.1.5"},
		{"a client sending the header itself", "203.0.113.9:80", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf.Reset()
			f := Must(XForwardedFor(trusted))
			for range 3 {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = tt.peer
				r.Header.Set("X-Forwarded-For", "198.51.100.7")
				_, err := f(r)
				require.NoError(t, err)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			require.Len(t, lines, 1, "once per Func")
			assert.Contains(t, lines[0], "outside the trusted prefixes")
			assert.NotContains(t, lines[0], "198.51.100.7")
			if tt.peerInLog != "" {
				assert.Contains(t, lines[0], tt.peerInLog)
			} else {
				assert.NotContains(t, lines[0], "203.0.113.9", "a public peer is a client: not logged")
			}
		})
	}

	buf.Reset()
	f := Must(XForwardedFor(trusted))
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:80"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	_, err := f(r)
	require.NoError(t, err)
	assert.Empty(t, buf.String(), "a trusted proxy's header is the normal case")
}

// PeerIP is what the examples key by when no proxy is trusted; behind a
// load balancer every client then has its address. The Func says so once
// per cause, as the middleware's default key does, and names no client.
func TestPeerIPWarnsWhenRequestsLookProxied(t *testing.T) {
	tests := []struct {
		name    string
		request func(i int) *http.Request
		warning string // "" means no warning at all
	}{
		{"a proxy header", func(i int) *http.Request {
			return peerRequest(fmt.Sprintf("203.0.113.%d:4000", i%200), "198.51.100.7")
		}, "carry X-Forwarded-For or Forwarded, but keyfunc.PeerIP keys by the peer address"},
		{"a few private peers", func(i int) *http.Request {
			return peerRequest(fmt.Sprintf("10.0.0.%d:4000", i%2), "")
		}, "most requests come from a handful of private addresses, and keyfunc.PeerIP keys by the peer address"},
		{"many public peers", func(i int) *http.Request {
			return peerRequest(fmt.Sprintf("203.0.113.%d:4000", i%200), "")
		}, ""},
		{"many private peers (an intranet)", func(i int) *http.Request {
			return peerRequest(fmt.Sprintf("10.0.%d.%d:4000", i/200, i%200), "")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := logtest.CaptureDefault(t, slog.LevelInfo)

			f := Must(PeerIP())
			for i := range 2 * proxyhint.Sample {
				_, err := f(tt.request(i))
				require.NoError(t, err)
			}
			out := strings.TrimSpace(buf.String())
			if tt.warning == "" {
				assert.Empty(t, out)
				return
			}
			lines := strings.Split(out, "\n")
			require.Len(t, lines, 1, "once per cause")
			assert.Contains(t, lines[0], "level=WARN")
			assert.Contains(t, lines[0], tt.warning)
			assert.Contains(t, lines[0], "keyfunc.XForwardedFor", "says what to use")
			assert.NotContains(t, lines[0], "198.51.100.7", "no client address in the log")
		})
	}
}

func peerRequest(remote, xff string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	if xff != "" {
		r.Header.Set("X-Forwarded-For", xff)
	}
	return r
}
