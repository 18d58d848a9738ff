package core

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlogObserverLogsViolationsSampledAndWithoutIdentities(t *testing.T) {
	var buf bytes.Buffer
	clock := newManualClock()
	o := NewSlogObserver(slog.New(slog.NewTextHandler(&buf, nil)))
	o.log.Now = clock.Now
	denied := NewResult(Decision{Limit: PerSecond(1).WithName("s"), Reason: Exhausted, RetryAfter: time.Second})
	denied.Tier = "free"
	req := Request{Identity: "203.0.113.7", Cost: 1}

	for range 25 {
		o.Decided(context.Background(), req, denied)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	assert.Len(t, lines, 10, "the burst of the log's own limit")

	clock.Advance(time.Second) // 10 more lines' worth
	o.Decided(context.Background(), req, denied)
	lines = strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 11)
	last := lines[10]
	assert.Contains(t, last, "suppressed=15")
	assert.Contains(t, last, "limit=s")
	assert.Contains(t, last, "client="+HashIdentity(req.Identity))
	assert.NotContains(t, buf.String(), "203.0.113.7")

	buf.Reset()
	o.Decided(context.Background(), req, NewResult(Decision{Allowed: true}))
	assert.Empty(t, buf.String(), "allowed requests are not logged")
}
