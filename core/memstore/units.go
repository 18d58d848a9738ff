package memstore

import (
	"math"
	"time"
)

// tolerance is TOL of docs/algorithms.md: a time within half a
// microsecond of a boundary counts as on it.
const tolerance = 0.5

// periodMicros returns P, the limit's period in whole microseconds.
func periodMicros(period time.Duration) int64 {
	return period.Microseconds()
}

// roundUp turns a duration in µs into whole µs: max(0, ceil(x − 0.5)).
func roundUp(x float64) int64 {
	return int64(max(0, math.Ceil(x-tolerance)))
}

// floorTokens turns a token amount into whole requests:
// max(0, floor(x + 0.5 / T)), T being the emission interval in µs.
func floorTokens(x, interval float64) int64 {
	return int64(max(0, math.Floor(x+tolerance/interval)))
}

// ttlMicros returns how long a state whose reset is resetMicros away is
// kept: the PEXPIRE of the scripts, ceil(reset / 1000) ms, at least 1 ms.
func ttlMicros(resetMicros int64) int64 {
	return max(1, (resetMicros+999)/1000) * 1000
}

// fromReading turns a duration d measured from a key's own time into one
// measured from the clock reading, lag µs earlier (docs/algorithms.md, "A
// clock that goes back brings no quota back"): a wait or a reset is longer
// by the lag, and 0 (nothing to wait for) stays 0.
func fromReading(d, lag int64) int64 {
	if d > 0 {
		return d + lag
	}
	return d
}

// micros converts whole microseconds to a [time.Duration].
func micros(us int64) time.Duration {
	return time.Duration(us) * time.Microsecond
}
