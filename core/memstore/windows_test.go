package memstore

import (
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

func TestTakeFixedWindow(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		limit core.Limit
		steps []step
	}{
		{
			name:  "2×Rate pass across a window boundary",
			limit: core.PerSecond(3),
			steps: []step{
				{900 * ms, 1, allowed(2, 100*ms)},
				{900 * ms, 1, allowed(1, 100*ms)},
				{us(999_999), 1, allowed(0, us(1))},
				{us(999_999), 1, denied(0, us(1), us(1))},
				{time.Second, 1, allowed(2, time.Second)},
				{time.Second, 2, allowed(0, time.Second)},
				{time.Second + us(1), 1, denied(0, us(999_999), us(999_999))},
			},
		},
		{
			name:  "peek, cost and cost too high",
			limit: core.PerSecond(3),
			steps: []step{
				{0, 0, allowed(3, 0)},
				{500 * ms, 2, allowed(1, 500*ms)},
				{500 * ms, 2, denied(1, 500*ms, 500*ms)},
				{500 * ms, 4, tooHigh(1, 500*ms)},
				{500 * ms, 0, allowed(1, 500*ms)},
				{1500 * ms, 0, allowed(3, 0)},
			},
		},
		{
			name:  "day windows reset at midnight UTC",
			limit: core.PerDay(2),
			steps: []step{
				{23 * time.Hour, 2, allowed(0, time.Hour)},
				{23*time.Hour + 59*time.Minute, 1, denied(0, time.Minute, time.Minute)},
				{24 * time.Hour, 1, allowed(1, 24*time.Hour)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, tt.limit.WithAlgorithm(core.FixedWindow), tt.steps)
		})
	}
}

func TestTakeSlidingWindow(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		limit core.Limit
		steps []step
	}{
		{
			name:  "previous window weighted by its overlap",
			limit: core.PerSecond(10),
			steps: []step{
				{0, 10, allowed(0, 2*time.Second)},
				{0, 1, denied(0, 2*time.Second, 1100*ms)},
				{1100 * ms, 0, allowed(1, 900*ms)},
				{1500 * ms, 0, allowed(5, 500*ms)},
				{1500 * ms, 5, allowed(0, 1500*ms)},
				{1500 * ms, 1, denied(0, 1500*ms, 100*ms)},
				{1600 * ms, 1, allowed(0, 1400*ms)},
				{3500 * ms, 0, allowed(10, 0)},
			},
		},
		{
			name:  "retry rounded up to the whole microsecond",
			limit: core.PerSecond(3),
			steps: []step{
				{0, 3, allowed(0, 2*time.Second)},
				// Into the next window: 1.5s − 2/3 s = 833333.33µs.
				{500 * ms, 1, denied(0, 1500*ms, us(833_334))},
				// e = 333333µs: 3·666667 + 1·10⁶ > 3·10⁶ by 1: wait 1/3µs.
				{us(1_333_333), 1, denied(0, us(666_667), us(1))},
				{us(1_333_334), 1, allowed(0, us(1_666_666))},
			},
		},
		{
			name:  "cost and cost too high",
			limit: core.PerSecond(10),
			steps: []step{
				{250 * ms, 2, allowed(8, 1750*ms)},
				{250 * ms, 9, denied(8, 1750*ms, 1250*ms)},
				{250 * ms, 11, tooHigh(8, 1750*ms)},
				{1500 * ms, 9, allowed(0, 1500*ms)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, tt.limit.WithAlgorithm(core.SlidingWindow), tt.steps)
		})
	}
}

func TestTakeSlidingLog(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		limit core.Limit
		steps []step
	}{
		{
			name:  "exact count in the window (now − P, now]",
			limit: core.PerSecond(3),
			steps: []step{
				{0, 1, allowed(2, time.Second)},
				{200 * ms, 1, allowed(1, time.Second)},
				{400 * ms, 1, allowed(0, time.Second)},
				{500 * ms, 1, denied(0, 900*ms, 500*ms)},
				{us(999_999), 1, denied(0, 400*ms+us(1), us(1))},
				{time.Second, 1, allowed(0, time.Second)},
				{time.Second, 2, denied(0, time.Second, 400*ms)},
				{time.Second, 4, tooHigh(0, time.Second)},
				{1400 * ms, 0, allowed(2, 600*ms)},
				{1400 * ms, 2, allowed(0, time.Second)},
			},
		},
		{
			name:  "peek on an empty log",
			limit: core.PerMinute(5),
			steps: []step{
				{0, 0, allowed(5, 0)},
				{time.Second, 5, allowed(0, time.Minute)},
				{time.Minute + time.Second, 0, allowed(5, 0)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, tt.limit.WithAlgorithm(core.SlidingLog), tt.steps)
		})
	}
}
