package httplimit

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// HeaderFormat selects the rate-limit response fields a [Middleware]
// writes. Formats combine with |: HeadersIETF|HeadersXRateLimit writes
// both. The zero value, [HeadersOff], writes none. Retry-After is not a
// format: it is always written on a denial that waiting can cure (see
// [SetHeaders]).
//
// docs/headers.md describes every field, with examples and the clients
// that read each format.
type HeaderFormat uint8

const (
	// HeadersIETF writes RateLimit-Policy and RateLimit as defined by
	// draft-ietf-httpapi-ratelimit-headers-11, in RFC 9651 structured-field
	// syntax; RateLimit's t is the time until more quota is available, not
	// until all of it is. It is the default.
	HeadersIETF HeaderFormat = 1 << iota
	// HeadersLegacy writes RateLimit-Limit, RateLimit-Remaining and
	// RateLimit-Reset of the earlier drafts; Reset is in delta seconds.
	HeadersLegacy
	// HeadersXRateLimit writes X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset; Reset is a Unix time in seconds, as GitHub sends it.
	HeadersXRateLimit

	allHeaderFormats = HeadersIETF | HeadersLegacy | HeadersXRateLimit
)

// HeadersOff writes no rate-limit fields.
const HeadersOff HeaderFormat = 0

// Names of the fields [SetHeaders] writes.
const (
	HeaderRateLimitPolicy     = "RateLimit-Policy"
	HeaderRateLimit           = "RateLimit"
	HeaderRateLimitLimit      = "RateLimit-Limit"
	HeaderRateLimitRemaining  = "RateLimit-Remaining"
	HeaderRateLimitReset      = "RateLimit-Reset"
	HeaderXRateLimitLimit     = "X-RateLimit-Limit"
	HeaderXRateLimitRemaining = "X-RateLimit-Remaining"
	HeaderXRateLimitReset     = "X-RateLimit-Reset"
	HeaderRetryAfter          = "Retry-After"
)

// The same names in canonical form (net/http's), so setting a field does
// not convert the name on every response.
const (
	canonRateLimitPolicy     = "Ratelimit-Policy"
	canonRateLimit           = "Ratelimit"
	canonRateLimitLimit      = "Ratelimit-Limit"
	canonRateLimitRemaining  = "Ratelimit-Remaining"
	canonRateLimitReset      = "Ratelimit-Reset"
	canonXRateLimitLimit     = "X-Ratelimit-Limit"
	canonXRateLimitRemaining = "X-Ratelimit-Remaining"
	canonXRateLimitReset     = "X-Ratelimit-Reset"
)

// String returns the formats joined by "|", e.g. "ietf|x-ratelimit", or "off".
func (f HeaderFormat) String() string {
	if f == HeadersOff {
		return "off"
	}
	var b []byte
	for i, name := range []string{"ietf", "legacy", "x-ratelimit"} {
		if f&(1<<i) != 0 {
			if len(b) > 0 {
				b = append(b, '|')
			}
			b = append(b, name...)
		}
	}
	if rest := f &^ allHeaderFormats; rest != 0 {
		b = fmt.Appendf(b, "|HeaderFormat(%d)", uint8(rest))
	}
	return string(b)
}

// SetHeaders sets in h the rate-limit fields of res in the formats f and,
// when res denies a request that waiting will admit, Retry-After. now is
// the time of the response, used only for the epoch X-RateLimit-Reset.
//
// The fields describe the binding decision ([core.Result.Binding]), except
// RateLimit-Policy, which lists every limit of the tier. When res is
// degraded the store's state is unknown, so only RateLimit-Policy (the
// configured policy) and Retry-After are written. Existing values of these
// fields are replaced; a Result without decisions sets nothing.
func SetHeaders(h http.Header, res core.Result, f HeaderFormat, now time.Time) {
	setHeaders(h, &res, nil, f, now)
}

// setHeaders is [SetHeaders], without copying res, with the parts of its
// fields that hf holds already formatted (nil: format them all).
func setHeaders(h http.Header, res *core.Result, hf *headerFields, f HeaderFormat, now time.Time) {
	if res.Len() == 0 {
		return
	}
	if f&HeadersIETF != 0 {
		setPolicy(h, res, hf)
	}
	i := res.BindingIndex()
	b := res.Decision(i)
	if retry, ok := retryAfter(res, b); ok {
		h.Set(HeaderRetryAfter, strconv.FormatInt(retry, 10)) // canonical already
	}
	if unknownQuota(res) {
		return
	}
	reset := resetDelay(b)
	if f&HeadersIETF != 0 {
		setRateLimit(h, hf.rateLimitStart(i), b, moreQuotaDelay(b))
	}
	if f&HeadersLegacy != 0 {
		h.Set(canonRateLimitLimit, strconv.FormatInt(b.Limit.Capacity(), 10))
		h.Set(canonRateLimitRemaining, strconv.FormatInt(b.Remaining, 10))
		h.Set(canonRateLimitReset, strconv.FormatInt(ceilSeconds(reset), 10))
	}
	if f&HeadersXRateLimit != 0 {
		h.Set(canonXRateLimitLimit, strconv.FormatInt(b.Limit.Capacity(), 10))
		h.Set(canonXRateLimitRemaining, strconv.FormatInt(b.Remaining, 10))
		h.Set(canonXRateLimitReset, strconv.FormatInt(epochCeil(now.Add(reset)), 10))
	}
}

// tierFields holds, per tier of a [core.Limiter], the parts of its
// rate-limit fields that depend only on its limits: formatted once, when
// a [Middleware] is built, and shared by every response of the tier. A
// limiter has a handful of tiers, and a Result's tier name is the
// limiter's own string, so finding it by a scan, whose string comparisons
// stop at the shared pointer, costs less than hashing the name into a map
// on every response.
type tierFields struct {
	names  []string
	fields []*headerFields
}

// newTierFields formats the fields of every tier of l.
func newTierFields(l *core.Limiter) *tierFields {
	f := new(tierFields)
	for _, name := range l.Tiers() {
		limits, _ := l.Tier(name)
		f.names = append(f.names, name)
		f.fields = append(f.fields, newHeaderFields(limits))
	}
	return f
}

// of returns the fields of the tier named name, or nil.
func (f *tierFields) of(name string) *headerFields {
	for i, n := range f.names {
		if n == name {
			return f.fields[i]
		}
	}
	return nil
}

// set sets the rate-limit fields of res in h, as [SetHeaders] does, with
// the parts of its tier formatted already when they are its limits'. A
// Result of the fallback store ([core.FailLocal]: its limits are shares of
// the tier's) or of a client's own limits (Result.Overridden) is
// formatted in full; so is one of limits f does not have, and stale
// reports it: the limiter's tiers changed ([core.Limiter.SetTiers]), and
// f must be formatted anew.
func (f *tierFields) set(h http.Header, res *core.Result, formats HeaderFormat, now time.Time) (stale bool) {
	hf := f.of(res.Tier)
	own := res.Fallback || res.Overridden
	if own || hf == nil || !hf.formats(res) {
		stale, hf = !own && res.Len() > 0, nil
	}
	setHeaders(h, res, hf, formats, now)
	return stale
}

// headerFields are the parts of the rate-limit fields of a tier that
// depend only on its limits ([tierFields]).
type headerFields struct {
	limits []core.Limit // what they were formatted from
	policy []string     // the RateLimit-Policy field, a value slice of length and capacity 1
	starts []string     // per limit, the start of its RateLimit value: `"name";r=`
}

// formats reports whether f was formatted from the limits of res: a
// decision of new tiers must not be sent with the fields of old ones.
func (f *headerFields) formats(res *core.Result) bool {
	if len(f.limits) != res.Len() {
		return false
	}
	for i := range f.limits {
		if res.Decision(i).Limit != f.limits[i] {
			return false
		}
	}
	return true
}

// newHeaderFields formats the header fields of limits.
func newHeaderFields(limits []core.Limit) *headerFields {
	ds := make([]core.Decision, len(limits))
	f := &headerFields{limits: limits, starts: make([]string, len(limits))}
	for i, l := range limits {
		ds[i].Limit = l
		f.starts[i] = string(appendRateLimitStart(nil, l))
	}
	f.policy = []string{formatPolicy(ds)}
	return f
}

// rateLimitStart returns the start of the RateLimit value of the i-th
// limit, or "" when f is nil.
func (f *headerFields) rateLimitStart(i int) string {
	if f == nil {
		return ""
	}
	return f.starts[i]
}

// setPolicy sets RateLimit-Policy: hf's value, formatted once per tier (a
// slice shared by every response, with no room to append into), or, when
// hf is nil, res's formatted here.
func setPolicy(h http.Header, res *core.Result, hf *headerFields) {
	if hf != nil {
		h[canonRateLimitPolicy] = hf.policy
		return
	}
	h.Set(canonRateLimitPolicy, formatPolicy(res.Decisions()))
}

// retryAfter returns the Retry-After seconds of a denial that waiting
// cures: the binding RetryAfter rounded up, at least 1. A request admitted,
// or denied because its cost exceeds a limit's capacity, has none.
func retryAfter(res *core.Result, b core.Decision) (int64, bool) {
	if res.Allowed || (!unknownQuota(res) && b.Reason == core.CostTooHigh) {
		return 0, false
	}
	return max(1, ceilSeconds(b.RetryAfter)), true
}

// resetDelay is the time the legacy and X-RateLimit reset fields report
// (RateLimit's t is [moreQuotaDelay]): for a denial that
// waiting cures, the wait until a request passes (so it agrees with
// Retry-After, as the draft asks); otherwise the time until the limit is
// back to its full quota.
func resetDelay(d core.Decision) time.Duration {
	if waitCures(d) {
		return max(time.Second, d.RetryAfter)
	}
	return d.ResetAfter
}

// moreQuotaDelay is RateLimit's t, which drafts -10 and -11 define as
// "the number of seconds until additional quota associated with the quota
// policy is made available" (not until all of it is). For a denial that
// waiting cures it is the retry delay, as in [resetDelay]. A bucket (GCRA,
// token bucket) refills one request every Interval, so the next one is
// back when the requests still missing after it remain to refill:
// ResetAfter − (Capacity − Remaining − 1) × Interval. A fixed window's quota
// comes back at its end, ResetAfter. The sliding window and log free quota
// as old requests leave the window, which their decisions do not say; for
// them t stays ResetAfter, later than the truth, which the draft allows
// ("the server MAY arbitrarily alter the reset parameter value"). A
// [core.Concurrency] limit frees a place when any request in flight ends, which
// is usually long before its lease expires (ResetAfter): its t is the
// estimate its denials give as RetryAfter, at most [core.ConcurrencyRetryAfter]
// (0 when nothing is in flight: the quota is full).
func moreQuotaDelay(d core.Decision) time.Duration {
	if waitCures(d) {
		return max(time.Second, d.RetryAfter)
	}
	if d.Limit.Algorithm == core.Concurrency {
		return min(d.ResetAfter, core.ConcurrencyRetryAfter)
	}
	missing := d.Limit.Capacity() - d.Remaining - 1
	if missing < 0 || (d.Limit.Algorithm != core.GCRA && d.Limit.Algorithm != core.TokenBucket) {
		return d.ResetAfter
	}
	// float64: missing × Period may exceed an int64 of nanoseconds; the
	// result, at most ResetAfter (≤ 366 days, see Limit.Validate), does not.
	later := time.Duration(float64(missing) * float64(d.Limit.Period) / float64(d.Limit.Rate))
	return max(0, d.ResetAfter-later)
}

// waitCures reports whether d denies until its RetryAfter, which the
// reset fields then report: an exhausted quota, a block, or a
// [core.Lockout] (no quota comes back before the lockout ends).
func waitCures(d core.Decision) bool {
	return !d.Allowed && (d.Reason == core.Exhausted || d.Reason == core.Blocked || d.Reason == core.LockedOut)
}

// ceilSeconds returns d in whole seconds, rounded up; never negative.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// epochCeil returns t as Unix seconds, rounded up.
func epochCeil(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// unknownQuota reports whether res says nothing true about the quota: a
// degraded result the failure mode made up (not one of the fallback store).
func unknownQuota(res *core.Result) bool {
	return res.Degraded && !res.Fallback
}
