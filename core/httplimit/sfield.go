package httplimit

import (
	"strconv"
	"time"
	"unsafe"

	"github.com/ratelimitkit/ratelimit/core"
)

// This file writes the RFC 9651 structured fields of
// draft-ietf-httpapi-ratelimit-headers-11: lists of items whose bare item is
// an sf-string (the policy name) and whose parameters are sf-integers.

// maxNameLen is the longest name of a valid [core.Limit] (see
// [core.Limit.Validate]); a longer one, only in a hand-made Result, is
// formatted into a buffer of its own.
const maxNameLen = 32

// maxSFInteger is the largest sf-integer (RFC 9651, section 3.3.1: at most
// 15 digits).
const maxSFInteger = 999_999_999_999_999

// formatPolicy returns the RateLimit-Policy value of a tier's decisions,
// one item per limit: "name";q=<Rate>;w=<Period in seconds, rounded up>.
// q per w is the sustained rate; w rounds up, so the advertised rate is
// never above the real one. A limit's burst shows in RateLimit's r. A
// concurrency limit is "name";q=<n>;qu="concurrency": the draft's quota
// unit for requests in flight (its quota-unit registry, since the -09
// text), and no window (its Period is the lease TTL, not a window).
func formatPolicy(ds []core.Decision) string {
	b := make([]byte, 0, 32*len(ds))
	for i, d := range ds {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendSFString(b, d.Limit.EffectiveName())
		b = appendSFParam(b, "q", d.Limit.Rate)
		if d.Limit.Algorithm == core.Concurrency {
			b = append(b, `;qu="concurrency"`...)
			continue
		}
		b = appendSFParam(b, "w", d.Limit.PeriodSeconds())
	}
	return string(b)
}

// The RateLimit value of the binding decision d is
// "name";r=<Remaining>;t=<delay until more quota, in seconds, rounded up>,
// appended in two parts: the start, formatted once per tier, and the end.

// appendRateLimitStart appends the part of a RateLimit value that depends
// only on the limit: `"name";r=`.
func appendRateLimitStart(b []byte, l core.Limit) []byte {
	return append(appendSFString(b, l.EffectiveName()), ";r="...)
}

// appendRateLimitEnd appends the rest: <Remaining>;t=<reset>.
func appendRateLimitEnd(b []byte, d core.Decision, reset time.Duration) []byte {
	b = appendSFInteger(b, d.Remaining)
	return appendSFParam(b, "t", ceilSeconds(reset))
}

// rateLimitField is the value of one RateLimit field as net/http holds it
// (a slice of one string) together with the bytes of that string, so that
// setting the field, on every response, costs one allocation instead of
// two. buf fits the longest value of a valid limit: its name (at most
// maxNameLen bytes that need no escape) quoted, two 15-digit integers.
type rateLimitField struct {
	v   [1]string
	buf [2 + maxNameLen + len(";r=;t=") + 2*15]byte
}

// setRateLimit sets the RateLimit field of h to the value of d. start is
// the value's start for d's limit ([appendRateLimitStart]), formatted
// beforehand, or "" to format it here.
func setRateLimit(h map[string][]string, start string, d core.Decision, reset time.Duration) {
	f := new(rateLimitField)
	b := f.buf[:0]
	if start != "" {
		b = append(b, start...)
	} else {
		b = appendRateLimitStart(b, d.Limit)
	}
	if b = appendRateLimitEnd(b, d, reset); len(b) <= len(f.buf) {
		f.v[0] = unsafe.String(&f.buf[0], len(b)) // f.buf is written once, here
	} else {
		f.v[0] = string(b) // a name longer than a Limit's can be: only in a hand-made Result
	}
	h[canonRateLimit] = f.v[:]
}

// appendSFString appends s as an sf-string: quoted, with '"' and '\'
// escaped. Bytes an sf-string cannot hold (controls, DEL, non-ASCII) become
// '?'; limit names are validated and never contain them.
func appendSFString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c > 0x7e:
			b = append(b, '?')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// appendSFParam appends the parameter ;key=v with v clamped to the range
// of a non-negative sf-integer.
func appendSFParam(b []byte, key string, v int64) []byte {
	b = append(b, ';')
	b = append(b, key...)
	b = append(b, '=')
	return appendSFInteger(b, v)
}

// appendSFInteger appends v clamped to the range of a non-negative
// sf-integer.
func appendSFInteger(b []byte, v int64) []byte {
	return strconv.AppendInt(b, min(max(v, 0), maxSFInteger), 10)
}
