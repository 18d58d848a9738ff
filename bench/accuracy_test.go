package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBound(t *testing.T) {
	from := time.Unix(10, 200_000_000) // 10.2 s: inside the epoch window [10, 11)
	to := from.Add(3500 * time.Millisecond)
	tests := []struct {
		kind boundKind
		want float64
	}{
		{boundBucket, 100 + 350},             // burst, then 100/s for 3.5 s
		{boundEpochWindows, 400},             // windows 10, 11, 12, 13
		{boundFirstWindows, 400},             // opened at 0, 1, 2, 3 s after the first
		{boundLog, 400},                      // likewise: no 1 s span above 100
		{boundSlidingCounter, 300 + 100*0.7}, // three full windows, 70% of the last
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, tt.kind.bound(accuracyQuota, from, to))
		})
	}
}

func TestBoundWithinOneWindow(t *testing.T) {
	from := time.Unix(10, 100_000_000)
	to := from.Add(500 * time.Millisecond)
	assert.Equal(t, 100.0, boundSlidingCounter.bound(accuracyQuota, from, to))
	assert.Equal(t, 100.0, boundEpochWindows.bound(accuracyQuota, from, to))
	assert.Equal(t, 150.0, boundBucket.bound(accuracyQuota, from, to))
}
