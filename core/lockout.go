package core

import (
	"fmt"
	"time"
)

// maxLockout bounds every duration of a [Lockout], as Period is bounded:
// every time the stores compute stays exact in a float64 of µs.
const maxLockout = maxPeriod

// lockoutSteps is the exponent of the default Max of a [Lockout]: For ×
// Multiplier⁴, the fifth lockout in a row.
const lockoutSteps = 4

// Effective returns lo with the defaults of its zero fields filled in, the
// values the stores apply: Multiplier 1, Max the shorter of For ×
// Multiplier⁴ and 366 days, Cooldown For. The zero Lockout (none) stays
// zero.
func (lo Lockout) Effective() Lockout {
	if lo == (Lockout{}) {
		return lo
	}
	if lo.Multiplier == 0 {
		lo.Multiplier = 1
	}
	if lo.Max == 0 {
		lo.Max = min(maxLockout, lo.Duration(lockoutSteps+1))
	}
	if lo.Cooldown == 0 {
		lo.Cooldown = lo.For
	}
	return lo
}

// Duration returns how long the level-th lockout in a row lasts (1 is the
// first; a lockout is in a row when it starts within Cooldown of the end of
// the previous one): For × Multiplier^(level−1), at most Max (when Max is
// set). It counts in whole microseconds, as the stores do.
func (lo Lockout) Duration(level int64) time.Duration {
	d, most := lo.For.Microseconds(), lo.Max.Microseconds()
	if most == 0 {
		most = maxLockout.Microseconds()
	}
	m := max(1, lo.Multiplier)
	for k := int64(1); k < level && m > 1 && d < most; k++ {
		if d > most/m {
			d = most
			break
		}
		d *= m
	}
	return time.Duration(min(d, most)) * time.Microsecond
}

// validate reports why lo cannot work on the limit named name, naming the
// field: the zero Lockout is none; any other needs After ≥ 1 (at most
// 2⁴⁰), Within and For of at least 1µs, Multiplier ≥ 1 (0: 1), Max ≥ For
// (0: the default of [Lockout.Effective]) and Cooldown ≥ 0 (0: For), each
// duration at most 366 days. A [Concurrency] limit has none: its denials
// end when a request in flight does.
func (lo Lockout) validate(name string, a Algorithm) error {
	if lo == (Lockout{}) {
		return nil
	}
	if a.leased() {
		return fmt.Errorf("limit %q: Lockout is not supported on a Concurrency limit", name)
	}
	switch {
	case lo.After < 1:
		return fmt.Errorf("limit %q: Lockout.After must be at least 1 when a Lockout is set, got %d", name, lo.After)
	case lo.After > maxRate:
		return fmt.Errorf("limit %q: Lockout.After must be at most %d, got %d", name, int64(maxRate), lo.After)
	case lo.Multiplier < 0:
		return fmt.Errorf("limit %q: Lockout.Multiplier must be at least 1 (0 means 1), got %d", name, lo.Multiplier)
	}
	for _, f := range [...]struct {
		field    string
		d        time.Duration
		optional bool // 0 means its default
	}{{"Within", lo.Within, false}, {"For", lo.For, false}, {"Max", lo.Max, true}, {"Cooldown", lo.Cooldown, true}} {
		if err := validateLockoutDuration(name, f.field, f.d, f.optional); err != nil {
			return err
		}
	}
	if lo.Max != 0 && lo.Max < lo.For {
		return fmt.Errorf("limit %q: Lockout.Max %s is shorter than Lockout.For %s", name, lo.Max, lo.For)
	}
	return nil
}

// validateLockoutDuration checks the duration field d of a Lockout: at
// least 1µs (or 0 when optional) and at most 366 days.
func validateLockoutDuration(name, field string, d time.Duration, optional bool) error {
	switch {
	case optional && d == 0:
		return nil
	case d < time.Microsecond && optional:
		return fmt.Errorf("limit %q: Lockout.%s must be 0 (the default) or at least 1µs, got %s", name, field, d)
	case d < time.Microsecond:
		return fmt.Errorf("limit %q: Lockout.%s must be at least 1µs, got %s", name, field, d)
	case d > maxLockout:
		return fmt.Errorf("limit %q: Lockout.%s must be at most %s, got %s", name, field, maxLockout, d)
	}
	return nil
}
