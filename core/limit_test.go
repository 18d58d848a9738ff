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
	tests := []struct {
		limit Limit
		want  string
	}{
		{PerSecond(10), "10-per-1s"},
		{PerMinute(100), "100-per-1m"},
		{PerHour(1000), "1000-per-1h"},
		{PerDay(10_000), "10000-per-1d"},
		{Every(3 * time.Minute), "1-per-3m"},
		{Limit{Rate: 1, Period: 90 * time.Second}, "1-per-90s"},
		{Limit{Rate: 1, Period: 36 * time.Hour}, "1-per-36h"},
		{Limit{Rate: 1, Period: 7 * 24 * time.Hour}, "1-per-7d"},
		{Limit{Rate: 1, Period: 1500 * time.Millisecond}, "1-per-1500ms"},
		{Limit{Rate: 1, Period: 500 * time.Microsecond}, "1-per-500us"},
		{PerDay(1).WithName("day"), "day"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.limit.EffectiveName())
			assert.NoError(t, validateField("limit Name", tt.limit.EffectiveName(), maxNameLen), "a derived name is a valid name")
		})
	}
	assert.NoError(t, Limit{Rate: 1, Period: 500 * time.Microsecond}.Validate(), "was: a name the user never wrote, 1-per-500µs")
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

// Validation bounds every value the stores compute: each row is a limit at
// a bound (valid) or just past it (an error naming the field).
func TestLimitValidateBounds(t *testing.T) {
	const maxRate = 1 << 40
	day := 24 * time.Hour
	year := 366 * day // the longest Period and the longest refill
	tests := []struct {
		name    string
		limit   Limit
		wantErr string // a substring of the error; "" means valid
	}{
		{"Rate at 2⁴⁰", Limit{Rate: maxRate, Period: year}, ""},
		{"Rate past 2⁴⁰", Limit{Rate: maxRate + 1, Period: year}, "Rate must be at most 1099511627776"},
		{"Period at 366 days", Limit{Rate: 1, Period: year}, ""},
		{"Period past 366 days", Limit{Rate: 1, Period: year + 1}, "Period must be at most"},
		{"Period at 1µs per request", Limit{Rate: 1000, Period: time.Millisecond}, ""},
		{"Period under 1µs per request", Limit{Rate: 1000, Period: time.Millisecond - 1}, "Period 999.999µs is shorter than 1µs per request"},
		{"Burst at 2⁴⁰", Limit{Rate: maxRate, Period: year, Burst: maxRate}, ""},
		{"Burst past 2⁴⁰", Limit{Rate: maxRate, Period: year, Burst: maxRate + 1}, "Burst must be at most 1099511627776"},
		{"a day per request, burst refilled in 366 days", PerDay(1).WithBurst(366), ""},
		{"a day per request, burst refilled in 367 days", PerDay(1).WithBurst(367), `Burst 367 refills in Burst × Period / Rate = 367 × 24h0m0s / 1, longer than 366 days; Burst must be at most 366`},
		{"the review's PerDay(1).WithBurst(120000)", PerDay(1).WithBurst(120000), "Burst must be at most 366 at this Rate and Period"},
		{"10 per hour, burst refilled in exactly 366 days", PerHour(10).WithBurst(87840), ""},
		{"10 per hour, burst refilled 6 minutes later", PerHour(10).WithBurst(87841), "Burst must be at most 87840"},
		{"a fractional interval at the bound", Limit{Rate: 3, Period: time.Second, Burst: 3 * 31_622_400}, ""},
		{"a fractional interval past the bound", Limit{Rate: 3, Period: time.Second, Burst: 3*31_622_400 + 1}, "Burst must be at most 94867200"},
		{"Burst × Period beyond int64 at the bound", Limit{Rate: maxRate, Period: year, Burst: maxRate}.WithAlgorithm(TokenBucket), ""},
		{"Burst × Period beyond int64 past the bound", Limit{Rate: maxRate / 2, Period: year, Burst: maxRate}, "Burst must be at most 549755813888"},
		{"window algorithms: Burst is Rate, refilled in one Period", Limit{Rate: maxRate, Period: year, Algorithm: SlidingLog}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.limit.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), tt.wantErr)
			}
		})
	}
}
