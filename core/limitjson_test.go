package core_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// Every kind of limit encodes with the policy document's field names and
// decodes back to itself.
func TestLimitJSONRoundTrip(t *testing.T) {
	madrid := mustZone(t, "Europe/Madrid")
	tests := []struct {
		name  string
		limit core.Limit
		json  string
	}{
		{"gcra with burst", core.PerSecond(10).WithBurst(100).WithName("per-second"),
			`{"name":"per-second","rate":10,"period":"1s","burst":100,"algorithm":"gcra"}`},
		{"unnamed", core.PerMinute(100), `{"rate":100,"period":"1m","algorithm":"gcra"}`},
		{"fractional period", core.Every(1500 * time.Millisecond).WithAlgorithm(core.TokenBucket),
			`{"rate":1,"period":"1.5s","algorithm":"token_bucket"}`},
		{"hours and minutes", core.Limit{Rate: 3, Period: 90 * time.Minute, Algorithm: core.SlidingLog},
			`{"rate":3,"period":"1h30m","algorithm":"sliding_log"}`},
		{"calendar day", core.PerCalendarDay(1000, madrid).WithName("daily"),
			`{"name":"daily","rate":1000,"algorithm":"calendar_window","calendar":"day","zone":"Europe/Madrid"}`},
		{"calendar month in UTC", core.PerCalendarMonth(5, time.UTC),
			`{"rate":5,"algorithm":"calendar_window","calendar":"month","zone":"UTC"}`},
		{"concurrency", core.Concurrent(4).WithName("inflight"),
			`{"name":"inflight","rate":4,"period":"30s","algorithm":"concurrency"}`},
		{"lockout", core.PerMinute(5).WithName("attempts").WithLockout(core.Lockout{
			After: 10, Within: 15 * time.Minute, For: 15 * time.Minute, Multiplier: 2, Max: 24 * time.Hour, Cooldown: 24 * time.Hour}),
			`{"name":"attempts","rate":5,"period":"1m","algorithm":"gcra","lockout":{"after":10,"within":"15m","for":"15m","multiplier":2,"max":"24h","cooldown":"24h"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.limit)
			require.NoError(t, err)
			assert.JSONEq(t, tt.json, string(data))

			var back core.Limit
			require.NoError(t, json.Unmarshal(data, &back))
			assert.Equal(t, tt.limit.EffectiveName(), back.EffectiveName())
			assert.Equal(t, tt.limit.Calendar.Location.String(), back.Calendar.Location.String())
			back.Calendar.Location, tt.limit.Calendar.Location = nil, nil // loaded twice: equal, not identical
			assert.Equal(t, tt.limit, back)
		})
	}
}

// What the JSON leaves out gets its documented default: GCRA, the
// calendar unit's length, the default lease TTL.
func TestLimitJSONDefaults(t *testing.T) {
	tests := []struct {
		json string
		want core.Limit
	}{
		{`{"rate":10,"period":"1s"}`, core.PerSecond(10)},
		{`{"rate":7,"algorithm":"calendar_window","calendar":"week","zone":"UTC"}`, core.PerCalendarWeek(7, time.UTC)},
		{`{"rate":2,"algorithm":"concurrency"}`, core.Concurrent(2)},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			var got core.Limit
			require.NoError(t, json.Unmarshal([]byte(tt.json), &got))
			assert.Equal(t, tt.want, got)
			assert.NoError(t, got.Validate())
		})
	}
}

// Bad input is an error naming the field, never a limit half read.
func TestLimitJSONStrict(t *testing.T) {
	tests := []struct {
		json string
		want string
	}{
		{`{"rate":10,"period":"1s","brust":5}`, `unknown field "brust"`},
		{`{"rate":10,"period":"5 minutes"}`, `period: time: unknown unit`},
		{`{"rate":10,"period":10}`, `period`},
		{`{"rate":1.5,"period":"1s"}`, `rate`},
		{`{"rate":10,"period":"1s","algorithm":"leaky"}`, `algorithm: unknown algorithm "leaky"`},
		{`{"rate":10,"algorithm":"calendar_window","calendar":"fortnight","zone":"UTC"}`, `calendar: unknown calendar unit "fortnight"`},
		{`{"rate":10,"algorithm":"calendar_window","calendar":"day","zone":"Mars/Olympus"}`, `zone: unknown time zone Mars/Olympus`},
		{`{"rate":10,"algorithm":"calendar_window","calendar":"day","zone":"Local"}`, `zone: "Local"`},
		{`{"rate":5,"period":"1m","lockout":{"after":3,"within":"forever"}}`, `lockout.within: time: invalid duration`},
		{`{"rate":5,"period":"1m","lockout":{"after":3,"for":"1m","dureation":"1m"}}`, `unknown field "dureation"`},
		{`{"rate":5,"period":"1m"} {"rate":6}`, `trailing data`},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			l := core.PerHour(99)
			err := l.UnmarshalJSON([]byte(tt.json)) // json.Unmarshal would catch trailing data itself
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, core.PerHour(99), l, "a limit that fails to decode is left as it was")
		})
	}
}

// A zone only a process of its own knows (a fixed zone) cannot be sent to
// another node: encoding it fails, naming the limit.
func TestLimitJSONRefusesAZoneOtherNodesCannotLoad(t *testing.T) {
	_, err := json.Marshal(core.PerCalendarDay(10, time.FixedZone("UTC+2", 7200)))

	require.Error(t, err)
	assert.Contains(t, err.Error(), `limit "10-per-day-UTC_2": zone: unknown time zone UTC+2`)
}

// Parse functions accept exactly the names String writes.
func TestParseAlgorithmAndCalendarUnit(t *testing.T) {
	for a := core.GCRA; a <= core.Concurrency; a++ {
		got, err := core.ParseAlgorithm(a.String())
		require.NoError(t, err)
		assert.Equal(t, a, got)
	}
	for _, u := range []core.CalendarUnit{core.NotCalendar, core.CalendarDay, core.CalendarWeek, core.CalendarMonth} {
		got, err := core.ParseCalendarUnit(u.String())
		require.NoError(t, err)
		assert.Equal(t, u, got)
	}
	_, err := core.ParseAlgorithm("GCRA")
	assert.Error(t, err, "names are lower case, as written")
}
