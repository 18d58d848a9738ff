package proxyhint

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// The private-address cause is judged once, on the first Sample requests:
// nine in ten from at most Peers private or loopback addresses.
func TestPrivatePeersAreJudgedOnTheSample(t *testing.T) {
	tests := []struct {
		name    string
		private int // of the Sample requests, from the first `peers` private addresses
		peers   int
		warns   bool
	}{
		{"nine in ten from one address", 900, 1, true},
		{"nine in ten from four addresses", 900, Peers, true},
		{"all from five addresses", Sample, Peers + 1, false},
		{"one short of nine in ten", 899, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := logtest.CaptureDefault(t, slog.LevelInfo)
			h := New("test: ", "the subject", "The fix.")
			for i := range 2 * Sample {
				remote := fmt.Sprintf("203.0.113.%d:80", i%200)
				if i < tt.private {
					remote = fmt.Sprintf("10.0.0.%d:80", i%tt.peers)
				}
				h.Observe(request(remote, ""))
			}
			lines := logtest.Lines(buf)
			if !tt.warns {
				assert.Empty(t, lines)
				return
			}
			require.Len(t, lines, 1)
			assert.Contains(t, lines[0], "test: most requests come from a handful of private addresses, and the subject keys by the peer address")
			assert.Contains(t, lines[0], "The fix.")
			assert.Contains(t, lines[0], fmt.Sprintf("requests=%d private=%d addresses=%d", Sample, tt.private, tt.peers))
		})
	}
}

// Once per cause, however many goroutines observe at once.
func TestEachCauseWarnsOnceUnderConcurrency(t *testing.T) {
	buf := logtest.CaptureDefault(t, slog.LevelInfo)
	h := New("test: ", "the subject", "The fix.")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range Sample / 2 {
				h.Observe(request(fmt.Sprintf("127.0.0.%d:80", 1+(g+i)%2), "198.51.100.7"))
			}
		})
	}
	wg.Wait()
	got := logtest.Lines(buf)
	require.Len(t, got, 2, strings.Join(got, "\n"))
	all := strings.Join(got, "\n")
	assert.Equal(t, 1, strings.Count(all, "requests carry X-Forwarded-For or Forwarded, but the subject keys by the peer address"))
	assert.Equal(t, 1, strings.Count(all, "a handful of private addresses"))
	assert.NotContains(t, buf.String(), "198.51.100.7", "no client address in the log")
}

func request(remote, xff string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	if xff != "" {
		r.Header.Set("X-Forwarded-For", xff)
	}
	return r
}
