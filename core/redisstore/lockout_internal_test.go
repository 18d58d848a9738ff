package redisstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// The script refuses lockout keys and values that are not where the
// protocol puts them (docs/redis-protocol.md, "Lockouts"), before any
// write, instead of reading other values as a lockout.
func TestScriptRejectsMisplacedLockouts(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	s, err := New(client)
	require.NoError(t, err)
	prefix := redistest.Prefix(t)
	state, lock := prefix+":{c}:a:g", prefix+":{c}:a:x"
	gcra := []any{16, 10, 1_000_000, 10}
	lo := []any{3, 60_000_000, 60_000_000, 1, 60_000_000, 60_000_000}
	inFlight := []any{22, 2, 30_000_000, 2}
	tests := []struct {
		name string
		keys []string
		args []any
		want string
	}{
		{"the lockout key missing", []string{state}, cat([]any{"", 1}, gcra, lo), "1 KEYS for 1 limits, 1 of them with a lockout"},
		// A third key needs the values of a second limit.
		{"a lockout key too many", []string{state, lock, lock}, cat([]any{"", 1}, gcra, lo), "12 ARGV for 3 KEYS, want 2 + 4 per key"},
		{"the lockout values missing", []string{state, lock}, cat([]any{"", 1}, gcra), "6 ARGV for 2 KEYS, want 2 + 4 per key"},
		{"a lockout value missing", []string{state, lock}, cat([]any{"", 1}, gcra, lo[:5]), "11 ARGV for 2 KEYS, want 12"},
		{"a lockout value not a number", []string{state, lock}, cat([]any{"", 1}, gcra, lo[:5], []any{"x"}), "lockout value ARGV 12 is not a number"},
		{"a lockout value too many", []string{state, lock}, cat([]any{"", 1}, gcra, lo, []any{7}), "13 ARGV for 2 KEYS, want 12"},
		{"a concurrency limit with a lockout", []string{prefix + ":{c}:b:i", prefix + ":{c}:b:x"}, cat([]any{"", 1}, inFlight, lo, []any{"lease"}),
			"limit 1: a concurrency limit has no lockout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.progs.many.script.Run(context.Background(), client, tt.keys, tt.args...).Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			n, err := client.Exists(context.Background(), tt.keys...).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "nothing written")
		})
	}
}

// Reason code 3 is a lockout; a code the protocol does not define is an
// error, not a Reason the caller never heard of.
func TestReplyReasons(t *testing.T) {
	limits := []core.Limit{core.PerSecond(1)}
	ds, err := appendDecisions(nil, limits, []int64{0, 3, 0, 5, 4})
	require.NoError(t, err)
	assert.Equal(t, core.Decision{Limit: limits[0], Reason: core.LockedOut, ResetAfter: 5 * time.Microsecond, RetryAfter: 4 * time.Microsecond}, ds[0])
	for _, code := range []int64{4, -1} {
		_, err := appendDecisions(nil, limits, []int64{0, code, 0, 5, 4})
		assert.ErrorContains(t, err, "script replied reason "+strconv.FormatInt(code, 10)+" for limit 0")
	}
}
