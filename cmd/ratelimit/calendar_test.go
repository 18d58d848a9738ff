package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestInspectAndAuditCalendarKeys checks that the tools read the keys of
// a calendar quota (docs/redis-protocol.md): inspect computes the
// remaining quota with a --limit in the calendar syntax and decodes the
// raw state, audit counts the keys under their algorithm and finds their
// type and TTL in order.
func TestInspectAndAuditCalendarKeys(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	monthly := core.PerCalendarMonth(100, madrid).WithName("monthly")
	l := newLimiter(t, client, prefix, hourly, monthly)
	take(t, l, "alice", 3)
	key := prefix + `:\{alice\}:monthly:c`

	code, stdout, stderr := cli(t, "inspect", "alice", "--redis", "redis://"+srv.Addr(), "--prefix", prefix,
		"--limit", "hourly=100/1h", "--limit", "monthly=100/month,tz=Europe/Madrid")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^monthly\s+calendar_window\s+100/month Europe/Madrid\s+97/100\s+\S+\s+\S+\s+`+key+`$`, stdout)

	code, stdout, stderr = cli(t, "inspect", "alice", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^`+key+`\s+hash\s+\S+\s+n=3 s=\d+: window from \d{4}-\d\d-\d\dT2[23]:00:00Z$`, stdout,
		"the month starts at midnight in Madrid: 22:00 or 23:00 UTC")

	code, stdout, stderr = cli(t, "audit", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, line("monthly calendar_window", "1"), stdout)
	assert.Contains(t, stdout, "keys without TTL: 0\n")
	assert.Contains(t, stdout, "keys whose Redis type does not match their algorithm tag: 0\n")
}
