package keylayout

import "time"

// EpochUnix is 2024-01-01T00:00:00Z in Unix seconds: the epoch of every
// time value the stores keep, in whole microseconds since it, so that
// they stay exact as Lua doubles (docs/algorithms.md, "Units"). The Lua
// scripts of core/redisstore keep their own copy (EPOCH); a test there
// checks that both agree.
const EpochUnix = 1704067200

// epochUnixMicros is [EpochUnix] in Unix microseconds.
const epochUnixMicros = EpochUnix * 1_000_000

// EpochMicros returns t in whole microseconds since the epoch, rounded
// down, as the scripts compute it from Redis TIME.
func EpochMicros(t time.Time) int64 {
	return t.UnixMicro() - epochUnixMicros
}

// FromEpochMicros returns the instant us microseconds after the epoch.
func FromEpochMicros(us int64) time.Time {
	return time.UnixMicro(us + epochUnixMicros)
}
