package httplimit

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/sftest"
)

func TestAppendSFString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"per-second", `"per-second"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"", `""`},
		{"tab\there", `"tab?here"`},
		{"caf\u00e9", `"caf??"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, string(appendSFString(nil, tt.in)))
		})
	}
}

func TestAppendSFParamClamps(t *testing.T) {
	tests := []struct {
		name string
		v    int64
		want string
	}{
		{"in range", 42, ";r=42"},
		{"negative", -5, ";r=0"},
		{"above 15 digits", 1 << 62, ";r=999999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(appendSFParam(nil, "r", tt.v)))
		})
	}
}

// FuzzSFFields writes a RateLimit-Policy and a RateLimit field for any
// name and numbers and parses them back with a strict RFC 9651 parser: the
// fields always parse, printable-ASCII names round-trip exactly (quotes and
// backslashes included), and integers stay within sf-integer range.
// SetHeaders's RateLimit field is the same value.
func FuzzSFFields(f *testing.F) {
	f.Add("per-second", int64(10), int64(time.Second), int64(3), int64(1500*time.Millisecond))
	f.Add(`a "quoted" \name\`, int64(1), int64(time.Hour), int64(-1), int64(-1))
	f.Add("\x00\xff\"\\", int64(1<<62), int64(1<<62), int64(1<<62), int64(1<<62))
	f.Fuzz(func(t *testing.T, name string, rate, period, remaining, reset int64) {
		d := core.Decision{Limit: core.Limit{Name: name, Rate: rate, Period: time.Duration(period)}, Remaining: remaining}
		h := http.Header{}
		setRateLimit(h, "", d, time.Duration(reset)) // its own buffer, or a string when the name is too long for it
		require.Equal(t, []string{formatRateLimit(d, time.Duration(reset))}, h.Values(HeaderRateLimit))
		for _, field := range []string{formatPolicy([]core.Decision{d, d}), formatRateLimit(d, time.Duration(reset))} {
			items, err := sftest.ParseList(field)
			require.NoError(t, err, "field %q", field)
			for _, it := range items {
				require.Equal(t, sftest.String, it.Value.Kind)
				if printableASCII(d.Limit.EffectiveName()) {
					require.Equal(t, d.Limit.EffectiveName(), it.Value.Str)
				}
				for _, p := range it.Params {
					require.Equal(t, sftest.Integer, p.Value.Kind)
					require.GreaterOrEqual(t, p.Value.Int, int64(0))
				}
			}
		}
	})
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// formatRateLimit returns the RateLimit value of the decision d with more
// quota reset away, from the two parts setRateLimit writes.
func formatRateLimit(d core.Decision, reset time.Duration) string {
	return string(appendRateLimitEnd(appendRateLimitStart(nil, d.Limit), d, reset))
}
