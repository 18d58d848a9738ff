package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLockoutValidate(t *testing.T) {
	const day = 24 * time.Hour
	login := PerMinute(5).WithName("login")
	lo := Lockout{After: 10, Within: 15 * time.Minute, For: 15 * time.Minute}
	tests := []struct {
		name    string
		limit   Limit
		wantErr string // a substring of the error; "" means valid
	}{
		{"no lockout", login, ""},
		{"After, Within and For", login.WithLockout(lo), ""},
		{"every field", login.WithLockout(Lockout{After: 10, Within: time.Minute, For: time.Minute, Multiplier: 2, Max: day, Cooldown: day}), ""},
		{"After of one", login.WithLockout(Lockout{After: 1, Within: time.Microsecond, For: time.Microsecond}), ""},
		{"durations at 366 days", login.WithLockout(Lockout{After: 1, Within: 366 * day, For: 366 * day, Max: 366 * day, Cooldown: 366 * day}), ""},
		{"Max equal to For", login.WithLockout(Lockout{After: 1, Within: time.Minute, For: time.Hour, Max: time.Hour}), ""},
		{"After 2⁴⁰", login.WithLockout(Lockout{After: 1 << 40, Within: time.Minute, For: time.Hour}), ""},
		{"on a window algorithm", login.WithAlgorithm(SlidingLog).WithLockout(lo), ""},
		{"on a calendar window", PerCalendarDay(100, time.UTC).WithLockout(lo), ""},

		{"set without After", login.WithLockout(Lockout{Within: time.Minute, For: time.Minute}), `limit "login": Lockout.After must be at least 1 when a Lockout is set, got 0`},
		{"negative After", login.WithLockout(Lockout{After: -1, Within: time.Minute, For: time.Minute}), "Lockout.After must be at least 1"},
		{"After past 2⁴⁰", login.WithLockout(Lockout{After: 1<<40 + 1, Within: time.Minute, For: time.Minute}), "Lockout.After must be at most 1099511627776"},
		{"no Within", login.WithLockout(Lockout{After: 3, For: time.Minute}), `limit "login": Lockout.Within must be at least 1µs, got 0s`},
		{"Within under 1µs", login.WithLockout(Lockout{After: 3, Within: 999, For: time.Minute}), "Lockout.Within must be at least 1µs"},
		{"no For", login.WithLockout(Lockout{After: 3, Within: time.Minute}), "Lockout.For must be at least 1µs, got 0s"},
		{"negative For", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: -time.Minute}), "Lockout.For must be at least 1µs"},
		{"Within past 366 days", login.WithLockout(Lockout{After: 3, Within: 366*day + 1, For: time.Minute}), "Lockout.Within must be at most 8784h0m0s"},
		{"For past 366 days", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: 367 * day}), "Lockout.For must be at most"},
		{"negative Multiplier", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: time.Minute, Multiplier: -2}), "Lockout.Multiplier must be at least 1 (0 means 1), got -2"},
		{"Max shorter than For", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: time.Hour, Max: time.Minute}), "Lockout.Max 1m0s is shorter than Lockout.For 1h0m0s"},
		{"negative Max", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: time.Hour, Max: -time.Hour}), "Lockout.Max must be 0 (the default) or at least 1µs"},
		{"Max past 366 days", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: time.Hour, Max: 400 * day}), "Lockout.Max must be at most"},
		{"negative Cooldown", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: time.Hour, Cooldown: -1}), "Lockout.Cooldown must be 0 (the default) or at least 1µs"},
		{"Cooldown past 366 days", login.WithLockout(Lockout{After: 3, Within: time.Minute, For: time.Hour, Cooldown: 367 * day}), "Lockout.Cooldown must be at most"},
		{"on a Concurrency limit", Concurrent(3).WithLockout(lo), `limit "3-in-flight": Lockout is not supported on a Concurrency limit`},
		{"a bad Lockout on an unnamed limit", PerSecond(2).WithLockout(Lockout{After: 1}), `limit "2-per-1s": Lockout.Within`},
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
				assert.Contains(t, err.Error(), "ratelimit: ")
			}
		})
	}
}

func TestLockoutInTierIsValidated(t *testing.T) {
	_, err := newPlan(Tier{Name: "login", Limits: []Limit{PerMinute(5).WithName("attempts").WithLockout(Lockout{After: 10, For: time.Minute})}}, 0)
	if assert.Error(t, err) {
		assert.Equal(t, `ratelimit: tier "login": limit "attempts": Lockout.Within must be at least 1µs, got 0s`, err.Error())
	}
}

func TestLockoutEffective(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name string
		lo   Lockout
		want Lockout
	}{
		{"none stays none", Lockout{}, Lockout{}},
		{"defaults: Multiplier 1, Max For, Cooldown For",
			Lockout{After: 5, Within: time.Minute, For: time.Hour},
			Lockout{After: 5, Within: time.Minute, For: time.Hour, Multiplier: 1, Max: time.Hour, Cooldown: time.Hour}},
		{"Max For × Multiplier⁴",
			Lockout{After: 5, Within: time.Minute, For: time.Minute, Multiplier: 2},
			Lockout{After: 5, Within: time.Minute, For: time.Minute, Multiplier: 2, Max: 16 * time.Minute, Cooldown: time.Minute}},
		{"Max at most 366 days",
			Lockout{After: 5, Within: time.Minute, For: day, Multiplier: 10},
			Lockout{After: 5, Within: time.Minute, For: day, Multiplier: 10, Max: 366 * day, Cooldown: day}},
		{"given values kept",
			Lockout{After: 5, Within: time.Minute, For: time.Minute, Multiplier: 3, Max: time.Hour, Cooldown: day},
			Lockout{After: 5, Within: time.Minute, For: time.Minute, Multiplier: 3, Max: time.Hour, Cooldown: day}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.lo.Effective())
		})
	}
}

func TestLockoutDuration(t *testing.T) {
	const day = 24 * time.Hour
	lo := Lockout{After: 10, Within: 15 * time.Minute, For: 15 * time.Minute, Multiplier: 2, Max: 24 * time.Hour}
	tests := []struct {
		lo    Lockout
		level int64
		want  time.Duration
	}{
		{lo, 1, 15 * time.Minute},
		{lo, 2, 30 * time.Minute},
		{lo, 3, time.Hour},
		{lo, 7, 16 * time.Hour},
		{lo, 8, 24 * time.Hour}, // 32h, capped
		{lo, 1 << 62, 24 * time.Hour},
		{Lockout{For: time.Minute, Max: time.Hour}, 1 << 62, time.Minute}, // Multiplier 0: 1
		{Lockout{For: time.Minute, Multiplier: 1 << 62}, 3, 366 * day},    // no Max: 366 days; no overflow
		{Lockout{For: 1500 * time.Nanosecond, Multiplier: 3, Max: time.Second}, 2, 3 * time.Microsecond},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.lo.Duration(tt.level), "%+v.Duration(%d)", tt.lo, tt.level)
	}
}
