package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

func loadLocation(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err, "the calendar tests need the system's time zone database")
	return loc
}

// TestCalendarSkew checks what happens when the server's clock is outside
// the boundaries the app sent, computed around an app clock days away: a
// distinct error (ErrCalendarSkew, not ErrStoreUnavailable, so a limiter
// does not fail open through it), and nothing written, not even the keys
// of the other limits of the take. Within the span, the same take passes.
func TestCalendarSkew(t *testing.T) {
	madrid := loadLocation(t, "Europe/Madrid")
	server := time.Date(2025, time.March, 30, 12, 0, 0, 0, time.UTC) // a 23-hour day in Madrid
	tests := []struct {
		name    string
		limit   core.Limit
		skew    time.Duration
		wantErr bool
	}{
		{"day, app 3 days ahead", core.PerCalendarDay(5, madrid), 72 * time.Hour, true},
		{"day, app 3 days behind", core.PerCalendarDay(5, madrid), -72 * time.Hour, true},
		{"day, app 46 hours behind", core.PerCalendarDay(5, madrid), -46 * time.Hour, false},
		{"week, app 15 days ahead", core.PerCalendarWeek(5, madrid), 15 * 24 * time.Hour, true},
		{"week, app 13 days behind", core.PerCalendarWeek(5, madrid), -13 * 24 * time.Hour, false},
		{"month, app 100 days behind", core.PerCalendarMonth(5, madrid), -100 * 24 * time.Hour, true},
		{"month, app 58 days ahead", core.PerCalendarMonth(5, madrid), 58 * 24 * time.Hour, false},
	}
	for _, b := range backends {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				client := b.client(t)
				store, kb := newStore(t, client,
					redisstore.WithClock(func() time.Time { return server }),
					redisstore.WithAppClock(func() time.Time { return server.Add(tt.skew) }))
				limits := []core.Limit{core.PerMinute(10), tt.limit}
				keys := kb.AppendKeys(nil, "client", limits)
				ds, err := store.Take(context.Background(), nil, keys, limits, 1)
				if !tt.wantErr {
					require.NoError(t, err)
					assert.Equal(t, int64(4), ds[1].Remaining)
					return
				}
				require.Error(t, err)
				assert.ErrorIs(t, err, redisstore.ErrCalendarSkew)
				assert.False(t, errors.Is(err, core.ErrStoreUnavailable), "a skewed clock is not an outage: %v", err)
				assert.Empty(t, ds)
				n, err := client.Exists(context.Background(), keys...).Result()
				require.NoError(t, err)
				assert.Equal(t, int64(0), n, "a failed take writes no key")
			})
		}
	}
}

// TestCalendarState pins the key of a calendar window (docs/redis-protocol.md):
// a hash with the window's start s (µs since 2024-01-01T00:00:00Z) and the
// count n, expiring at the end of the window.
func TestCalendarState(t *testing.T) {
	newYork := loadLocation(t, "America/New_York")
	now := time.Date(2025, time.November, 2, 16, 0, 0, 0, time.UTC) // 11:00 EST on a 25-hour day
	start := time.Date(2025, time.November, 2, 4, 0, 0, 0, time.UTC)
	end := time.Date(2025, time.November, 3, 5, 0, 0, 0, time.UTC)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			store, kb := newStore(t, client, redisstore.WithClock(func() time.Time { return now }))
			limits := []core.Limit{core.PerCalendarDay(100, newYork)}
			keys := kb.AppendKeys(nil, "client", limits)
			require.Equal(t, kb.Key("client", limits[0]), keys[0])
			assert.Contains(t, keys[0], ":{client}:100-per-day-America.New_York:c")
			ds, err := store.Take(context.Background(), nil, keys, limits, 3)
			require.NoError(t, err)
			assert.Equal(t, end.Sub(now), ds[0].ResetAfter)

			ctx := context.Background()
			typ, err := client.Type(ctx, keys[0]).Result()
			require.NoError(t, err)
			assert.Equal(t, "hash", typ)
			state, err := client.HGetAll(ctx, keys[0]).Result()
			require.NoError(t, err)
			assert.Equal(t, map[string]string{
				"s": strconv.FormatInt(start.UnixMicro()-time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), 10),
				"n": "3",
			}, state)
			pttl, err := client.PTTL(ctx, keys[0]).Result()
			require.NoError(t, err)
			// The TTL runs on the server's real clock from the test clock's
			// reading: at most the time to the window's end, and a loaded
			// machine does not take a minute between the take and PTTL.
			assert.LessOrEqual(t, pttl, end.Sub(now))
			assert.Greater(t, pttl, end.Sub(now)-time.Minute)
		})
	}
}

// TestCalendarServerTime takes a UTC day quota on the server's own clock
// (TIME, no test clock): the app sends boundaries around its clock and the
// server's picks the window, so ResetAfter is the time to the next UTC
// midnight. The server runs on this machine: the two clocks agree to well
// under the minute of margin.
func TestCalendarServerTime(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			client := b.client(t)
			limits := []core.Limit{core.PerCalendarDay(5, time.UTC)}
			// A take that straddles midnight UTC cannot be checked against
			// one window; the next one, a fresh client, does not straddle.
			for attempt := 0; attempt < 2; attempt++ {
				store, kb := newStore(t, client)
				keys := kb.AppendKeys(nil, "client", limits)
				before := time.Now()
				ds, err := store.Take(context.Background(), nil, keys, limits, 2)
				after := time.Now()
				require.NoError(t, err)
				_, end := limits[0].Calendar.Window(before)
				if _, e := limits[0].Calendar.Window(after); e != end {
					continue
				}
				require.True(t, ds[0].Allowed)
				assert.Equal(t, int64(3), ds[0].Remaining)
				assert.LessOrEqual(t, ds[0].ResetAfter, end.Sub(before)+time.Minute)
				assert.GreaterOrEqual(t, ds[0].ResetAfter, end.Sub(after)-time.Minute)
				return
			}
			t.Fatal("two takes straddled midnight UTC")
		})
	}
}
