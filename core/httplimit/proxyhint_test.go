package httplimit

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
	"github.com/ratelimitkit/ratelimit/internal/proxyhint"
)

// The likeliest incident: a server behind a load balancer keyed by the
// peer address, so every client shares the balancer's quota. The default
// middleware says so, once per cause; one keyed otherwise says nothing.
func TestMiddlewareWarnsWhenRequestsLookProxied(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		request func(i int) *http.Request
		warning string // "" means no warning at all
	}{
		{"proxy header", nil, func(i int) *http.Request {
			r := clientRequest(fmt.Sprintf("203.0.113.%d:4000", i%200))
			r.Header.Set("X-Forwarded-For", "198.51.100.7")
			return r
		}, "carry X-Forwarded-For"},
		{"a few private peers", nil, func(i int) *http.Request {
			return clientRequest(fmt.Sprintf("10.0.0.%d:4000", i%2))
		}, "a handful of private addresses"},
		{"many public peers", nil, func(i int) *http.Request {
			return clientRequest(fmt.Sprintf("203.0.113.%d:4000", i%200))
		}, ""},
		{"many private peers (an intranet)", nil, func(i int) *http.Request {
			return clientRequest(fmt.Sprintf("10.0.%d.%d:4000", i/200, i%200))
		}, ""},
		{"own key function", []Option{WithKey(RemoteAddrKey)}, func(i int) *http.Request {
			r := clientRequest("10.0.0.1:4000")
			r.Header.Set("X-Forwarded-For", "198.51.100.7")
			return r
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := logtest.CaptureDefault(t, slog.LevelDebug)
			m, err := New(core.MustNewLimiter(&recordingStore{}, core.WithLimits(core.PerSecond(1))), tt.opts...)
			require.NoError(t, err)
			for i := range 2 * proxyhint.Sample {
				m.Decide(httptest.NewRecorder(), tt.request(i), "/")
			}
			lines := logtest.Lines(buf)
			if tt.warning == "" {
				assert.Empty(t, lines)
				return
			}
			require.Len(t, lines, 1, "once per cause")
			assert.Contains(t, lines[0], tt.warning)
			assert.Contains(t, lines[0], "level=WARN")
			assert.NotContains(t, lines[0], "198.51.100.7", "no client address in the log")
		})
	}
}

func clientRequest(remote string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(""))
	r.RemoteAddr = remote
	return r
}
