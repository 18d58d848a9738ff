package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

func TestParseLimit(t *testing.T) {
	tests := []struct {
		spec string
		want core.Limit
	}{
		{"per-second=10/1s,burst=100", core.PerSecond(10).WithBurst(100).WithName("per-second")},
		{"10/1s", core.PerSecond(10).WithName("10-per-1s")},
		{"api=100/m", core.PerMinute(100).WithName("api")},
		{"daily=10000/1d,alg=fixed_window", core.PerDay(10000).WithName("daily").WithAlgorithm(core.FixedWindow)},
		{"slow=1/3m,alg=t", core.Every(3 * time.Minute).WithName("slow").WithAlgorithm(core.TokenBucket)},
		{"log=5/90s,algorithm=sliding_log", core.Limit{Name: "log", Rate: 5, Period: 90 * time.Second, Algorithm: core.SlidingLog}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := parseLimit(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseCalendarLimit(t *testing.T) {
	tests := []struct {
		spec     string
		wantName string
		wantUnit core.CalendarUnit
		wantZone string
		wantDesc string
	}{
		{"10000/month,tz=Europe/Madrid", "10000-per-month-Europe.Madrid", core.CalendarMonth, "Europe/Madrid", "10000/month Europe/Madrid"},
		{"daily=100/day", "daily", core.CalendarDay, "UTC", "100/day UTC"},
		{"5/week,tz=America/New_York,alg=calendar_window", "5-per-week-America.New_York", core.CalendarWeek, "America/New_York", "5/week America/New_York"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := parseLimit(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, got.Name)
			assert.Equal(t, core.CalendarWindow, got.Algorithm)
			assert.Equal(t, tt.wantUnit, got.Calendar.Unit)
			assert.Equal(t, tt.wantZone, got.Calendar.Location.String())
			assert.Equal(t, tt.wantUnit.Period(), got.Period)
			assert.Equal(t, tt.wantDesc, describeLimit(got))
		})
	}
}

func TestParseLimitRejects(t *testing.T) {
	tests := []struct {
		spec string
		want string
	}{
		{"10", "want [name=]RATE/PERIOD"},
		{"x=ten/1s", `rate "ten" is not an integer`},
		{"x=10/fortnight", `period "fortnight" is not a duration`},
		{"x=10/1s,burst=lots", `burst "lots" is not an integer`},
		{"x=10/1s,alg=leaky", `unknown algorithm "leaky"; want one of gcra, token_bucket`},
		{"x=10/1s,colour=red", `unknown option "colour=red"`},
		{"x=0/1s", "Rate must be positive"},
		{"x=10/1s,burst=20,alg=fixed_window", "has no separate burst"},
		{"bad name=10/1s", "has byte ' '"},
		{"x=10/1d,tz=Europe/Madrid", "applies to the calendar periods"},
		{"x=10/month,tz=Mars/Olympus", `tz "Mars/Olympus" is not a zone`},
		{"x=10/month,tz=Local", `tz "Local" is not a zone`},
		{"x=10/1d,alg=calendar_window", "Calendar.Unit must be"},
		{"x=10/month,alg=gcra", "Calendar is set, but Algorithm is gcra"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := parseLimit(tt.spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestFmtDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{800 * time.Microsecond, "800µs"},
		{1234567 * time.Nanosecond, "1.23ms"},
		{1500 * time.Millisecond, "1.5s"},
		{time.Minute, "1m"},
		{90 * time.Minute, "1h30m"},
		{time.Hour, "1h"},
		{48 * time.Hour, "2d"},
		{-time.Second, "-1s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fmtDuration(tt.d))
		})
	}
}

func TestParseKeyFollowsTheKeyBuilder(t *testing.T) {
	kb, err := core.NewKeyBuilder("app:rl")
	require.NoError(t, err)
	tg := &target{prefix: "app:rl", keys: kb}
	for _, id := range []string{"alice", "a*b", "user with spaces", core.Identity("/x", "1.2.3.4")} {
		for _, a := range algorithms() {
			l := core.PerSecond(1).WithName("lim").WithAlgorithm(a)
			key := kb.Key(id, l)
			t.Run(key, func(t *testing.T) {
				want := keyName{prefix: "app:rl", tag: core.SafeIdentity(id), limit: "lim", algorithm: a, hasTag: true, ok: true}
				assert.Equal(t, want, parseKey(key))
				cl := client{tag: core.SafeIdentity(id)}
				assert.Equal(t, []string{key}, tg.keysOf(cl, []core.Limit{l}), "keys from a tag")
			})
		}
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		key  string
		want keyName
	}{
		{"rl:{alice}:burst:g", keyName{prefix: "rl", tag: "alice", limit: "burst", algorithm: core.GCRA, hasTag: true, ok: true}},
		{"rl:api:{1.2.3.4}:daily:f", keyName{prefix: "rl:api", tag: "1.2.3.4", limit: "daily", algorithm: core.FixedWindow, hasTag: true, ok: true}},
		{"rl:login:{27:form:x|11:203.0.113.7}:login:l", keyName{prefix: "rl:login", tag: "27:form:x|11:203.0.113.7", limit: "login", algorithm: core.SlidingLog, hasTag: true, ok: true}},
		{"rl:{legacy}", keyName{}},
		{"rl:{legacy}:old", keyName{prefix: "rl", tag: "legacy", hasTag: true}},
		{"rl:{a}:x:zz", keyName{prefix: "rl", tag: "a", hasTag: true}},
		{"rl:{}:x:g", keyName{}},
		{"rl:session:42", keyName{}},
		{":{a}:x:g", keyName{}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			assert.Equal(t, tt.want, parseKey(tt.key))
		})
	}
}

func TestParseKeyspace(t *testing.T) {
	info := "# Keyspace\r\ndb0:keys=12,expires=10,avg_ttl=0,subexpiry=0\r\ndb3:keys=5,expires=0,avg_ttl=0\r\n"
	assert.Equal(t, map[int]int64{0: 12, 3: 5}, parseKeyspace(info))
	assert.Empty(t, parseKeyspace("# Keyspace\r\n"))
}
