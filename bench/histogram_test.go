package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBucketRoundTrip(t *testing.T) {
	for _, ns := range []uint64{0, 1, 31, 32, 33, 47, 48, 100, 1_000, 12_345, 1_000_000, 987_654_321, 1 << 40} {
		got := bucketValue(bucketOf(ns))
		assert.LessOrEqual(t, math.Abs(got-float64(ns)), float64(ns)/16+0.5, "bucketValue(bucketOf(%d)) = %v", ns, got)
	}
}

func TestHistogramQuantile(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	assert.InEpsilon(t, float64(500*time.Microsecond), float64(h.quantile(0.50)), 0.07)
	assert.InEpsilon(t, float64(990*time.Microsecond), float64(h.quantile(0.99)), 0.07)
	var empty histogram
	assert.Equal(t, time.Duration(0), empty.quantile(0.5))
}
