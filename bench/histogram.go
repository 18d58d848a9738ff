package main

import (
	"math/bits"
	"time"
)

// A histogram counts latencies in log-linear buckets: 16 per power of two,
// so any percentile is within about 6% of the truth, in a fixed array that
// a worker fills without allocating or locking. Each worker has its own;
// they are merged after the run.
type histogram struct {
	counts [64 * 16]uint64
	total  uint64
}

// bucketOf maps ns to its bucket: values under 32 ns have one each, larger
// ones keep their top five bits (the leading one and four below it).
func bucketOf(ns uint64) int {
	if ns < 32 {
		return int(ns)
	}
	shift := bits.Len64(ns) - 5
	return shift*16 + int(ns>>uint(shift))
}

// bucketValue is the middle of bucket i, the inverse of bucketOf.
func bucketValue(i int) float64 {
	if i < 32 {
		return float64(i)
	}
	shift := i/16 - 1
	low := uint64(i-shift*16) << uint(shift)
	return float64(low) + float64(uint64(1)<<uint(shift))/2
}

func (h *histogram) record(d time.Duration) {
	ns := uint64(max(d, 0))
	h.counts[min(bucketOf(ns), len(h.counts)-1)]++
	h.total++
}

func (h *histogram) merge(o *histogram) {
	for i, n := range o.counts {
		h.counts[i] += n
	}
	h.total += o.total
}

// quantile returns the latency below which a fraction q of the samples lie.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	want := uint64(q * float64(h.total))
	var seen uint64
	for i, n := range h.counts {
		seen += n
		if seen > want {
			return time.Duration(bucketValue(i))
		}
	}
	return time.Duration(bucketValue(len(h.counts) - 1))
}
