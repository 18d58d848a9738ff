package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// The cache answers what Calendar.Boundaries would, computing the list
// once per window of the app's clock.
func TestCalendarCache(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	day := core.Calendar{Unit: core.CalendarDay, Location: madrid}
	month := core.Calendar{Unit: core.CalendarMonth, Location: madrid}
	var cc calendarCache
	want := func(c core.Calendar, now time.Time) boundaries {
		var b boundaries
		for i, t := range c.Boundaries(nil, now) {
			b[i] = keylayout.EpochMicros(t)
		}
		return b
	}
	// 29 March 2025 in Madrid: 23:00Z on the 28th to 23:00Z on the 29th.
	morning := time.Date(2025, time.March, 29, 8, 0, 0, 0, time.UTC)
	first := cc.get(day, morning)
	assert.Equal(t, want(day, morning), *first)
	assert.Same(t, first, cc.get(day, morning.Add(14*time.Hour+59*time.Minute)), "the same window: the same list")
	assert.Equal(t, want(month, morning), *cc.get(month, morning), "each calendar has its own list")
	next := morning.Add(15 * time.Hour) // 23:00Z: midnight in Madrid
	assert.Equal(t, want(day, next), *cc.get(day, next))
	assert.NotEqual(t, *first, *cc.get(day, next))
	back := morning.Add(-9 * time.Hour) // an app clock stepped back into the 28th
	assert.Equal(t, want(day, back), *cc.get(day, back))
}

// The script refuses calendar arguments that are not where the protocol
// puts them (docs/redis-protocol.md), instead of reading other values as
// boundaries.
func TestScriptRejectsMisplacedBoundaries(t *testing.T) {
	client := redistest.Standalone(t).Client(t)
	s, err := New(client)
	require.NoError(t, err)
	prefix := redistest.Prefix(t)
	keys := []string{prefix + ":{c}:a:c", prefix + ":{c}:b:g"}
	day := []any{5, 10, int64(24 * time.Hour / time.Microsecond)}
	gcra := []any{0, 10, 1_000_000, 10}
	b := []any{0, 1, 2, 3, 4, 5}
	tests := []struct {
		name string
		args []any
		want string
	}{
		{"first pointing elsewhere", cat([]any{"", 1}, day, []any{7}, gcra, b), "boundaries at ARGV 7, want 11"},
		{"boundaries missing", cat([]any{"", 1}, day, []any{11}, gcra), "ARGV for 2 KEYS, want 16"},
		{"a boundary too many", cat([]any{"", 1}, day, []any{11}, gcra, b, []any{6}), "ARGV for 2 KEYS, want 16"},
	}
	// With a concurrency limit, one argument after the boundaries is the
	// lease id, and the take needs it.
	leasedKeys := []string{prefix + ":{c}:la:c", prefix + ":{c}:lb:i"}
	inFlight := []any{6, 2, 30_000_000, 2}
	leasedTests := []struct {
		name string
		args []any
		want string
	}{
		{"lease id missing", cat([]any{"", 1}, day, []any{11}, inFlight, b), "needs a lease id for cost 1"},
		{"lease id empty", cat([]any{"", 1}, day, []any{11}, inFlight, b, []any{""}), "needs a lease id for cost 1"},
		{"lease id before the boundaries", cat([]any{"", 1}, day, []any{11}, inFlight, []any{"lease"}, b), "limit 1: boundary ARGV 11 is not a number"},
		{"an argument after the lease id", cat([]any{"", 1}, day, []any{11}, inFlight, b, []any{"lease", 7}), "ARGV for 2 KEYS, want 16 (+ 1 lease id)"},
	}
	for _, tt := range leasedTests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.progs.many.script.Run(context.Background(), client, leasedKeys, tt.args...).Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			n, err := client.Exists(context.Background(), leasedKeys...).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "nothing written")
		})
	}
	t.Run("the lease id last", func(t *testing.T) {
		args := cat([]any{"", 1}, day, []any{11}, inFlight, calendarBoundaries(t), []any{"lease"})
		reply, err := s.progs.many.script.Run(context.Background(), client, leasedKeys, args...).Slice()
		require.NoError(t, err)
		require.Len(t, reply, 10)
		assert.Equal(t, []any{int64(1), int64(1)}, []any{reply[0], reply[5]}, "both limits admit")
		held, err := client.ZScore(context.Background(), leasedKeys[1], "lease").Result()
		require.NoError(t, err, "the lease is held under its id")
		assert.Positive(t, held)
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.progs.many.script.Run(context.Background(), client, keys, tt.args...).Err()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			n, err := client.Exists(context.Background(), keys...).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "nothing written")
		})
	}
}

// calendarBoundaries returns the six boundaries of the UTC day holding
// now, as the script's ARGV (the server's clock picks the window).
func calendarBoundaries(t *testing.T) []any {
	t.Helper()
	var out []any
	for _, b := range (core.Calendar{Unit: core.CalendarDay, Location: time.UTC}).Boundaries(nil, time.Now()) {
		out = append(out, keylayout.EpochMicros(b))
	}
	require.Len(t, out, calendarArgs)
	return out
}

func cat(parts ...[]any) []any {
	var all []any
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}
