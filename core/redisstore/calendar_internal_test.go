package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
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
			b[i] = t.UnixMicro() - epochUnixMicros
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
