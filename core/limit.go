package core

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"
)

// Algorithm selects how a [Limit] counts requests. The zero value is [GCRA].
//
// docs/algorithms.md describes each one: memory per client, precision, and
// exactly what the fields of a [Decision] mean for it.
type Algorithm uint8

const (
	// GCRA (generic cell rate algorithm) stores one timestamp per client and
	// behaves exactly like a token bucket of capacity Burst refilled
	// continuously at Rate per Period. It is the default.
	GCRA Algorithm = iota
	// TokenBucket stores the token count and the time of the last refill.
	// Refill is continuous (fractional tokens are kept), so it gives the
	// same decisions as GCRA; it exists for users who want that state shape.
	TokenBucket
	// FixedWindow counts requests in windows of length Period aligned to
	// the epoch. Cheap and simple, but a client may send up to twice the
	// quota across a window boundary.
	FixedWindow
	// SlidingWindow (sliding window counter) weights the previous window's
	// count by its overlap with the moving window. Constant memory,
	// approximate.
	SlidingWindow
	// SlidingLog keeps one entry per admitted request: the exact count in any
	// moving window, at a memory cost proportional to Rate.
	SlidingLog
	// CalendarWindow counts requests in calendar windows: local days, ISO
	// weeks or months of a time zone ([Limit.Calendar]), which last 23 to
	// 25 hours, 7 days or 28 to 31 days. Otherwise it is a fixed window.
	// Make one with [PerCalendarDay], [PerCalendarWeek] or
	// [PerCalendarMonth].
	CalendarWindow
	// Concurrency limits requests in flight, not requests per time: at
	// most Rate requests of a client hold a lease at once. A request takes
	// a lease when it is admitted and gives it back with [Limiter.Release];
	// a lease never released (a node that died) expires after Period, the
	// lease TTL. Make one with [Concurrent].
	Concurrency

	numAlgorithms
)

var algorithmNames = [numAlgorithms]string{"gcra", "token_bucket", "fixed_window", "sliding_window", "sliding_log", "calendar_window", "concurrency"}

// algorithmTags are one-letter suffixes for store keys, so that a limit
// whose algorithm changes starts from fresh state instead of misreading the
// state of another algorithm. Concurrency is "i", for in flight ("c" is
// the calendar's).
var algorithmTags = [numAlgorithms]string{"g", "t", "f", "s", "l", "c", "i"}

// String returns the algorithm's name as used in docs and metrics.
func (a Algorithm) String() string {
	if a >= numAlgorithms {
		return fmt.Sprintf("Algorithm(%d)", uint8(a))
	}
	return algorithmNames[a]
}

// Tag returns the one-letter key suffix of the algorithm (see docs/algorithms.md).
func (a Algorithm) Tag() string {
	if a >= numAlgorithms {
		return "?"
	}
	return algorithmTags[a]
}

// leased reports whether the algorithm counts leases of requests in
// flight ([Concurrency]) rather than requests per time.
func (a Algorithm) leased() bool { return a == Concurrency }

// windowed reports whether the algorithm counts in windows, where the quota
// is Rate per Period and Burst has no separate meaning.
func (a Algorithm) windowed() bool {
	return a == FixedWindow || a == SlidingWindow || a == SlidingLog || a == CalendarWindow
}

// A Limit is one quota: Rate requests per Period, with room for Burst
// requests at once, counted by Algorithm. Name identifies the limit in keys
// and in the RateLimit-Policy header.
//
// Fractional rates are written as a whole number of requests per period:
// 0.5 per second is Limit{Rate: 1, Period: 2 * time.Second}, or [Every].
//
// A Limit is a value; the shorthand constructors return a Limit that can be
// refined with the With methods. The zero Burst means "same as Rate".
// [Limit.Validate] reports a limit that cannot work or that the stores
// cannot compute exactly: Rate and Burst at most 2⁴⁰, Period at most 366
// days and at least 1µs per request (Period ≥ Rate µs), and the time to
// refill a whole burst, Burst × Period / Rate, at most 366 days, so that
// every ResetAfter and RetryAfter fits a [time.Duration] and every time
// the stores compute stays exact in a float64 (docs/algorithms.md, "Units,
// epoch and precision").
type Limit struct {
	// Name identifies the limit: letters, digits, '_', '-' and '.', at most
	// 32 bytes. Empty means a name derived from Rate and Period ("10-per-1s").
	Name string
	// Rate is how many requests the limit admits per Period, on average;
	// for [Concurrency], how many may be in flight at once.
	Rate int64
	// Period is the length of the window (window algorithms) or the time
	// in which Rate tokens are refilled (GCRA, TokenBucket); for
	// [Concurrency], the lease TTL.
	Period time.Duration
	// Burst is the capacity: how many requests can pass at once after a
	// quiet spell. Zero means Rate. Only GCRA and TokenBucket accept a
	// Burst different from Rate.
	Burst int64
	// Algorithm counts the requests; the zero value is GCRA.
	Algorithm Algorithm
	// Calendar is the window of a [CalendarWindow] limit, whose Period
	// must then be the unit's nominal length ([CalendarUnit.Period]); the
	// zero value for every other algorithm.
	Calendar Calendar
	// Lockout, when set (After > 0), locks a client out for a while after
	// repeated denials of this limit: the login guard's answer to
	// credential stuffing. The zero value locks no one out.
	Lockout Lockout
}

// A Lockout locks a client out after After denials of its limit within
// Within: every request of the client is then denied ([LockedOut]) for
// For. Each further lockout that starts within Cooldown of the end of the
// previous one lasts Multiplier times longer, up to Max. The denials are
// counted in the same store call as the take, so two nodes cannot both miss
// the After-th one; the state expires with the cool-down.
//
// A denial counts when this limit itself denied a take of cost above zero
// for want of quota ([Exhausted]): not a cost above its capacity
// ([CostTooHigh]), not a take that another limit of the tier denied, and
// not the denials of a client already locked out. While locked out, a take
// charges nothing and a peek (cost 0) reports the lockout too. The zero
// value locks no one out; [Limit.Validate] checks the rest, and
// [Lockout.Effective] states the defaults of the zero fields.
type Lockout struct {
	After      int64         // denials that lock the client out; 0: no lockout
	Within     time.Duration // the window the denials are counted in
	For        time.Duration // the first lockout
	Multiplier int64         // each further lockout within Cooldown: this many times longer (1: always For)
	Max        time.Duration // the longest lockout (0: For × Multiplier⁴, at most 366 days)
	Cooldown   time.Duration // how long a lockout is remembered after it ends (0: For)
}

// WithLockout returns l with lockout lo.
func (l Limit) WithLockout(lo Lockout) Limit { l.Lockout = lo; return l }

// PerSecond returns a limit of rate requests per second (GCRA, burst = rate).
func PerSecond(rate int64) Limit { return Limit{Rate: rate, Period: time.Second} }

// PerMinute returns a limit of rate requests per minute.
func PerMinute(rate int64) Limit { return Limit{Rate: rate, Period: time.Minute} }

// PerHour returns a limit of rate requests per hour.
func PerHour(rate int64) Limit { return Limit{Rate: rate, Period: time.Hour} }

// PerDay returns a limit of rate requests per 24 hours.
func PerDay(rate int64) Limit { return Limit{Rate: rate, Period: 24 * time.Hour} }

// Every returns a limit of one request per interval: Every(3*time.Minute)
// is one request every three minutes, Every(2*time.Second) is 0.5 per second.
func Every(interval time.Duration) Limit { return Limit{Rate: 1, Period: interval} }

// DefaultLeaseTTL is the lease TTL of [Concurrent]: how long a lease that
// is never released (its node died) keeps its place. It is well above the
// duration of a normal request; a longer one renews its lease
// ([Limiter.Renew]) or uses a longer TTL ([Limit.WithLeaseTTL]).
const DefaultLeaseTTL = 30 * time.Second

// Concurrent returns a [Concurrency] limit: at most n requests of a client
// in flight at once, across every node sharing the store, with leases that
// expire after [DefaultLeaseTTL] when they are not released. Rate holds n
// and Period the lease TTL; the derived name is "<n>-in-flight".
//
// A request of any cost above zero takes one lease: a concurrency limit
// counts requests, whose cost is their duration, while the cost of the
// rate limits beside it in a tier weighs their quota. A cost of zero peeks
// (reports the leases in flight, takes none).
//
// The httplimit.Middleware holds a request's lease until its handler returns,
// renewing it every third of the TTL meanwhile. Mount it inside any
// wrapper that abandons its handler at a timeout (http.TimeoutHandler,
// echo's middleware.Timeout), so that it wraps the work itself:
// http.TimeoutHandler(limit(work), ...), not limit(http.TimeoutHandler(work,
// ...)). Such a wrapper returns at its timeout while the work goes on in
// its own goroutine; a limiter outside it sees the request end then and
// releases the lease of work still running, so more than n run at once. A
// wrapper that only cancels the context and waits for its handler (echo's
// ContextTimeout) is safe in either place.
func Concurrent(n int64) Limit {
	return Limit{Rate: n, Period: DefaultLeaseTTL, Algorithm: Concurrency}
}

// WithLeaseTTL returns l with lease TTL ttl (its Period). It is meant for a
// [Concurrency] limit, where a lease not released expires after ttl.
func (l Limit) WithLeaseTTL(ttl time.Duration) Limit { l.Period = ttl; return l }

// WithBurst returns l with capacity burst.
func (l Limit) WithBurst(burst int64) Limit { l.Burst = burst; return l }

// WithName returns l named name.
func (l Limit) WithName(name string) Limit { l.Name = name; return l }

// WithAlgorithm returns l counted by a.
func (l Limit) WithAlgorithm(a Algorithm) Limit { l.Algorithm = a; return l }

// Capacity returns the effective burst: Burst, or Rate when Burst is zero.
func (l Limit) Capacity() int64 {
	if l.Burst == 0 {
		return l.Rate
	}
	return l.Burst
}

// Interval returns the time in which one request's worth of quota comes
// back: Period / Rate.
func (l Limit) Interval() time.Duration {
	if l.Rate <= 0 {
		return 0
	}
	return l.Period / time.Duration(l.Rate)
}

// Key name derivation and validation limits.
const (
	maxNameLen = 32
	// maxPeriod keeps every time value of the stores exact in float64
	// microseconds (docs/algorithms.md, "Precision").
	maxPeriod = 366 * 24 * time.Hour
	// maxRate bounds Rate and Burst so counts and token arithmetic stay
	// exact in a float64.
	maxRate = 1 << 40
	// maxRefill bounds Burst × Period / Rate, the time a bucket takes to
	// refill its whole capacity: the longest ResetAfter and RetryAfter of
	// GCRA and TokenBucket (the window algorithms' are at most 2 × Period).
	// 120,000 per day, a burst of 120,000 days, would overflow a
	// time.Duration (292 years) and the stores' exact float64 µs.
	maxRefill = maxPeriod
	// maxInFlight bounds the Rate of a Concurrency limit: each lease is a
	// stored entry (about 100 bytes on Redis), so a client's leases stay
	// under a megabyte.
	maxInFlight = 10_000
	// minLeaseTTL and maxLeaseTTL bound the Period (lease TTL) of a
	// Concurrency limit: Redis expires keys in whole milliseconds, and a
	// lease that outlives a day is a leak, not a request.
	minLeaseTTL = time.Millisecond
	maxLeaseTTL = 24 * time.Hour
)

// EffectiveName returns Name, or when Name is empty the name derived from
// Rate and Period: "10-per-1s", "100-per-1m", "10000-per-1d",
// "1-per-500us" (the period in the largest unit that divides it exactly);
// for a calendar quota from Rate, the unit and the zone, '/' written '.':
// "10000-per-month-Europe.Madrid"; for a [Concurrency] limit "2-in-flight"
// (the lease TTL is not part of it: changing the TTL keeps the leases in
// flight). A derived name longer than 32 bytes fails [Limit.Validate]; set
// Name then. A [Limiter] derives it once, when it is built.
func (l Limit) EffectiveName() string {
	if l.Name != "" {
		return l.Name
	}
	b := strconv.AppendInt(make([]byte, 0, 48), l.Rate, 10)
	if l.Algorithm.leased() {
		return string(append(b, "-in-flight"...))
	}
	b = append(b, "-per-"...)
	if l.Algorithm == CalendarWindow {
		return string(appendCalendarName(b, l.Calendar))
	}
	return string(appendPeriodName(b, l.Period))
}

// periodUnits are the units of a derived limit name, largest first.
var periodUnits = [...]struct {
	d    time.Duration
	name string
}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"},
	{time.Millisecond, "ms"}, {time.Microsecond, "us"}, {1, "ns"}}

// appendPeriodName appends d in the largest unit that divides it exactly:
// "1s", "1m", "1d", "90s", "500us" — characters a limit name may hold.
func appendPeriodName(b []byte, d time.Duration) []byte {
	for _, u := range periodUnits {
		if d%u.d == 0 {
			return append(strconv.AppendInt(b, int64(d/u.d), 10), u.name...)
		}
	}
	return b // unreachable: every duration is whole nanoseconds
}

// Validate reports why l cannot work, naming the field: a rate, period or
// burst that is zero or negative or beyond the bounds of [Limit], an
// unknown algorithm, a Burst on a window algorithm, a name with
// characters outside [A-Za-z0-9_.-], or a calendar quota without a unit
// or Location, on time.Local, or whose Period is not the unit's nominal
// length ([Calendar]), or a [Lockout] that is set but incomplete or out of
// bounds, or set on a [Concurrency] limit (the field is named
// "Lockout.Within" and so on).
func (l Limit) Validate() error {
	if err := l.validate(); err != nil {
		return fmt.Errorf("ratelimit: %w", err)
	}
	return nil
}

// validate is Validate without the package prefix, for wrapping.
func (l Limit) validate() error {
	if l.Algorithm.leased() {
		return l.validateLeased()
	}
	switch {
	case l.Rate <= 0:
		return fmt.Errorf("limit %q: Rate must be positive, got %d", l.EffectiveName(), l.Rate)
	case l.Rate > maxRate:
		return fmt.Errorf("limit %q: Rate must be at most %d, got %d", l.EffectiveName(), int64(maxRate), l.Rate)
	case l.Period <= 0:
		return fmt.Errorf("limit %q: Period must be positive, got %s", l.EffectiveName(), l.Period)
	case l.Period > maxPeriod:
		return fmt.Errorf("limit %q: Period must be at most %s, got %s", l.EffectiveName(), maxPeriod, l.Period)
	case l.Period < time.Duration(l.Rate)*time.Microsecond:
		return fmt.Errorf("limit %q: Period %s is shorter than 1µs per request at Rate %d", l.EffectiveName(), l.Period, l.Rate)
	case l.Burst < 0:
		return fmt.Errorf("limit %q: Burst must not be negative, got %d", l.EffectiveName(), l.Burst)
	case l.Burst > maxRate:
		return fmt.Errorf("limit %q: Burst must be at most %d, got %d", l.EffectiveName(), int64(maxRate), l.Burst)
	case l.Algorithm >= numAlgorithms:
		return fmt.Errorf("limit %q: unknown Algorithm %d", l.EffectiveName(), uint8(l.Algorithm))
	case l.Algorithm.windowed() && l.Burst != 0 && l.Burst != l.Rate:
		return fmt.Errorf("limit %q: Burst %d differs from Rate %d, but %s counts Rate per Period and has no separate burst",
			l.EffectiveName(), l.Burst, l.Rate, l.Algorithm)
	case refillsTooSlowly(l.Capacity(), l.Period, l.Rate):
		return fmt.Errorf("limit %q: Burst %d refills in Burst × Period / Rate = %d × %s / %d, longer than 366 days; Burst must be at most %d at this Rate and Period",
			l.EffectiveName(), l.Capacity(), l.Capacity(), l.Period, l.Rate, maxBurst(l.Period, l.Rate))
	}
	if err := l.Calendar.validate(l.EffectiveName(), l.Algorithm, l.Period); err != nil {
		return err
	}
	if err := l.Lockout.validate(l.EffectiveName(), l.Algorithm); err != nil {
		return err
	}
	return validateField("limit Name", l.EffectiveName(), maxNameLen)
}

// validateLeased is validate for a [Concurrency] limit, whose Rate is the
// most requests in flight and Period the lease TTL.
func (l Limit) validateLeased() error {
	switch {
	case l.Rate < 1:
		return fmt.Errorf("limit %q: Rate (requests in flight) must be at least 1, got %d", l.EffectiveName(), l.Rate)
	case l.Rate > maxInFlight:
		return fmt.Errorf("limit %q: Rate (requests in flight) must be at most %d, got %d", l.EffectiveName(), maxInFlight, l.Rate)
	case l.Period < minLeaseTTL:
		return fmt.Errorf("limit %q: Period (lease TTL) must be at least %s, got %s", l.EffectiveName(), minLeaseTTL, l.Period)
	case l.Period > maxLeaseTTL:
		return fmt.Errorf("limit %q: Period (lease TTL) must be at most %s, got %s", l.EffectiveName(), maxLeaseTTL, l.Period)
	case l.Burst != 0 && l.Burst != l.Rate:
		return fmt.Errorf("limit %q: Burst %d differs from Rate %d, but concurrency counts requests in flight and has no separate burst",
			l.EffectiveName(), l.Burst, l.Rate)
	}
	if err := l.Calendar.validate(l.EffectiveName(), l.Algorithm, l.Period); err != nil {
		return err
	}
	if err := l.Lockout.validate(l.EffectiveName(), l.Algorithm); err != nil {
		return err
	}
	return validateField("limit Name", l.EffectiveName(), maxNameLen)
}

// refillsTooSlowly reports whether burst × period / rate, the time to
// refill a whole burst, exceeds maxRefill. The products are computed in 128
// bits: burst × period alone overflows an int64. All arguments are positive.
func refillsTooSlowly(burst int64, period time.Duration, rate int64) bool {
	hi, lo := bits.Mul64(uint64(burst), uint64(period))
	maxHi, maxLo := bits.Mul64(uint64(maxRefill), uint64(rate))
	return hi > maxHi || hi == maxHi && lo > maxLo
}

// maxBurst returns the largest burst that refills within maxRefill at
// rate per period, for error messages.
func maxBurst(period time.Duration, rate int64) int64 {
	hi, lo := bits.Mul64(uint64(maxRefill), uint64(rate))
	if hi >= uint64(period) {
		return maxRate
	}
	q, _ := bits.Div64(hi, lo, uint64(period))
	return int64(min(q, maxRate))
}

// validateName checks a name that becomes part of a store key.
func validateName(field, name string, maxLen int) error {
	if err := validateField(field, name, maxLen); err != nil {
		return fmt.Errorf("ratelimit: %w", err)
	}
	return nil
}

// validateField is validateName without the package prefix, for wrapping.
func validateField(field, name string, maxLen int) error {
	if name == "" {
		return fmt.Errorf("%s must not be empty", field)
	}
	if len(name) > maxLen {
		return fmt.Errorf("%s %q is longer than %d bytes", field, name, maxLen)
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return fmt.Errorf("%s %q has byte %q at %d; use letters, digits, '_', '-' and '.'", field, name, name[i], i)
		}
	}
	return nil
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// PeriodSeconds returns Period in whole seconds, rounded up, as the
// RateLimit-Policy "w" parameter wants it.
func (l Limit) PeriodSeconds() int64 {
	return int64(math.Ceil(l.Period.Seconds()))
}

// share returns l with Rate and Burst divided among n nodes, rounded up:
// each node's part of the quota when nodes decide locally.
func (l Limit) share(n int64) Limit {
	l.Rate = (l.Rate + n - 1) / n
	if l.Burst != 0 {
		l.Burst = (l.Burst + n - 1) / n
		if l.Algorithm.windowed() {
			l.Burst = l.Rate
		}
	}
	return l
}
