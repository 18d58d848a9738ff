package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLimitShorthands(t *testing.T) {
	tests := []struct {
		name         string
		limit        Limit
		wantRate     int64
		wantPeriod   time.Duration
		wantCapacity int64
		wantInterval time.Duration
	}{
		{"recipe free tier: capacity 100, refill 10/s", PerSecond(10).WithBurst(100), 10, time.Second, 100, 100 * time.Millisecond},
		{"PerMinute", PerMinute(100), 100, time.Minute, 100, 600 * time.Millisecond},
		{"PerHour with burst", PerHour(3600).WithBurst(20), 3600, time.Hour, 20, time.Second},
		{"PerDay", PerDay(10_000), 10_000, 24 * time.Hour, 10_000, 8640 * time.Millisecond},
		{"one per three minutes", Every(3 * time.Minute), 1, 3 * time.Minute, 1, 3 * time.Minute},
		{"0.5 per second", Every(2 * time.Second), 1, 2 * time.Second, 1, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, tt.limit.Validate())
			assert.Equal(t, tt.wantRate, tt.limit.Rate)
			assert.Equal(t, tt.wantPeriod, tt.limit.Period)
			assert.Equal(t, tt.wantCapacity, tt.limit.Capacity())
			assert.Equal(t, tt.wantInterval, tt.limit.Interval())
			assert.Equal(t, GCRA, tt.limit.Algorithm)
		})
	}
}

func TestLimitNames(t *testing.T) {
	assert.Equal(t, "10-per-1s", PerSecond(10).EffectiveName())
	assert.Equal(t, "1-per-3m0s", Every(3*time.Minute).EffectiveName())
	assert.Equal(t, "day", PerDay(1).WithName("day").EffectiveName())
	assert.Equal(t, int64(180), Every(3*time.Minute).PeriodSeconds())
	assert.Equal(t, int64(1), Limit{Rate: 1, Period: 1500 * time.Microsecond}.PeriodSeconds())
}

func TestAlgorithmStrings(t *testing.T) {
	tests := []struct {
		a         Algorithm
		name, tag string
	}{
		{GCRA, "gcra", "g"},
		{TokenBucket, "token_bucket", "t"},
		{FixedWindow, "fixed_window", "f"},
		{SlidingWindow, "sliding_window", "s"},
		{SlidingLog, "sliding_log", "l"},
		{Algorithm(99), "Algorithm(99)", "?"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.name, tt.a.String())
		assert.Equal(t, tt.tag, tt.a.Tag())
	}
}
