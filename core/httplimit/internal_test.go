package httplimit

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/logsample"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// recordingStore answers every take from its fields: an error, or each
// limit's decision (denied when deny names the limit), and records nothing
// more than core's tests need here.
type recordingStore struct {
	mu   sync.Mutex
	err  error
	deny map[string]bool // limit name -> deny
}

func (s *recordingStore) Take(_ context.Context, dst []core.Decision, _ []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return dst, s.err
	}
	for _, l := range limits {
		d := core.Decision{Limit: l, Allowed: !s.deny[l.Name], Remaining: l.Capacity() - cost}
		if !d.Allowed {
			d.Reason, d.RetryAfter, d.Remaining = core.Exhausted, l.Interval(), 0
		}
		dst = append(dst, d)
	}
	return dst, nil
}

var errDown = fmt.Errorf("dial tcp: connection refused: %w", core.ErrStoreUnavailable)

// A key function that fails for every request (a client's malformed body)
// must not let that client flood the log: the Middleware's default error
// handler samples its lines and cuts what the client controls.
func TestDefaultErrorLogIsSampledAndTruncated(t *testing.T) {
	buf := logtest.CaptureDefault(t, slog.LevelDebug)
	l := core.MustNewLimiter(&recordingStore{}, core.WithLimits(core.PerSecond(1)))
	m, err := New(l, WithKey(func(r *http.Request) (string, error) {
		return "", fmt.Errorf("no account in %q", r.URL.Path)
	}))
	require.NoError(t, err)
	fixed := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	m.errLog.Now = func() time.Time { return fixed } // no refill during the test
	path := "/" + strings.Repeat("a", 64<<10)

	for range 100 {
		w := httptest.NewRecorder()
		m.Handler(http.NotFoundHandler(), func(*http.Request) string { return "/" }).
			ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusInternalServerError, w.Code)
	}
	lines := logtest.Lines(buf)
	assert.Len(t, lines, logsample.Burst, "lines beyond the sampler's burst")
	for _, line := range lines {
		assert.Less(t, len(line), 2*1024, "a log line carries the client's 64 KB path")
	}
}

func TestFallbackDenialsAreReportedLikeStoreDenials(t *testing.T) {
	primary := &recordingStore{err: errDown}
	local := &recordingStore{deny: map[string]bool{"s": true}}
	l := core.MustNewLimiter(primary, core.WithLimits(core.PerSecond(10).WithName("s")), core.WithFallback(local, 1))

	res, err := l.Allow(context.Background(), "a")
	require.NoError(t, err)

	assert.True(t, res.Degraded)
	assert.True(t, res.Fallback)
	assert.Equal(t, 429, DenyStatus(res), "a real, local, denial")
	h := make(map[string][]string)
	SetHeaders(h, res, HeadersIETF, time.Now())
	assert.Contains(t, h, "Ratelimit", "quota fields describe the fallback's decision")
	assert.Contains(t, h, "Retry-After")

	made := core.MustNewLimiter(primary, core.WithLimits(core.PerSecond(10).WithName("s")), core.WithFailureMode(core.FailClosed))
	res, err = made.Allow(context.Background(), "a")
	require.NoError(t, err)
	assert.False(t, res.Fallback)
	assert.Equal(t, 503, DenyStatus(res), "made-up decisions: the limiter cannot tell")
	assert.Equal(t, core.Unavailable, res.Binding().Reason, "not a quota's exhaustion: nothing is known about the quota")
}
