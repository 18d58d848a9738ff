package redisstore

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

func TestParseAlgorithm(t *testing.T) {
	const good = "-- a.lua: header\n-- more\n\nlocal x = 1\nif x then\n  return {0, 1, x, 0, 0}\nend\n" +
		"-- charge(x, y): store\nredis.call('SET', key, x)\nreturn {1, 0, x, y, 0}\n"
	alg, err := parseAlgorithm(good)
	require.NoError(t, err)
	assert.Equal(t, algorithm{
		header: "-- a.lua: header\n-- more",
		decide: "local x = 1\nif x then\n  return {0, 1, x, 0, 0}\nend",
		args:   "x, y",
		charge: "-- charge(x, y): store\nredis.call('SET', key, x)",
		admit:  "return {1, 0, x, y, 0}",
	}, alg)
	assert.Equal(t, "-- a.lua: header\n-- more\n\n"+
		"local function charge_a(key, x, y)\n  -- charge(x, y): store\n  redis.call('SET', key, x)\nend\n\n"+
		"local function a(key, now, cost, rate, period, capacity, lease)\n  local x = 1\n  if x then\n"+
		"    return {0, 1, x, 0, 0}\n  end\n  return {1, 0, x, y, 0}, charge_a, x, y\nend\n", alg.functions("a"))

	tests := []struct {
		name, text, err string
	}{
		{"no charge line", "-- h\n\nlocal x = 1\nreturn {1, 0, x, 0, 0}\n", "no line -- charge(a, b, ...)"},
		{"a charge of nothing", "-- h\n\n-- charge(): x\nreturn {1, 0, 0, 0, 0}\n", "no line -- charge(a, b, ...)"},
		{"two charge lines", "-- h\n\n-- charge(x): a\n-- charge(y): b\nreturn {1, 0, 0, 0, 0}\n", "two charge lines, 3 and 4"},
		{"no reply last", "-- h\n\n-- charge(x): a\nredis.call('DEL', key)\n", "is not the reply of an admitted take"},
		{"a denial last", "-- h\n\n-- charge(x): a\nreturn {0, 1, 0, 0, 0}\n", "is not the reply of an admitted take"},
		{"no header", "local x = 1\n-- charge(x): a\nreturn {1, 0, 0, 0, 0}\n", "no header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseAlgorithm(tt.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

// TestAlgorithmsReplyOneLayout reads every algorithm file and checks that
// each of its returns is a reply of the one layout, a table of five
// values, the only thing both programs hand back (common.lua): a value
// added to one exit fails here, not silently in one program.
func TestAlgorithmsReplyOneLayout(t *testing.T) {
	returns := regexp.MustCompile(`\breturn\b`)
	for _, a := range joinedAlgorithms {
		t.Run(a.String(), func(t *testing.T) {
			b, err := scriptFS.ReadFile("scripts/" + a.String() + ".lua")
			require.NoError(t, err)
			n := 0
			for i, line := range strings.Split(string(b), "\n") {
				code, _, _ := strings.Cut(line, "--")
				if !returns.MatchString(code) {
					continue
				}
				n++
				reply, ok := strings.CutPrefix(strings.TrimSpace(code), "return {")
				reply, ok2 := strings.CutSuffix(reply, "}")
				require.True(t, ok && ok2, "line %d returns %q, not a reply table", i+1, code)
				assert.Equal(t, replyPerLimit, fields(reply), "line %d: %s", i+1, code)
			}
			assert.GreaterOrEqual(t, n, 3, "an algorithm denies, peeks and admits")
		})
	}
}

// fields counts the comma-separated values of a Lua table constructor's
// inside, commas within parentheses or braces aside.
func fields(s string) int {
	n, depth := 1, 0
	for _, r := range s {
		switch r {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n
}

// TestOneLimitProgramsDefineNoFunction checks what keeps the one-limit
// programs lean: Redis runs the whole program on every call, so a function
// defined there would be built anew on every take.
func TestOneLimitProgramsDefineNoFunction(t *testing.T) {
	function := regexp.MustCompile(`\bfunction\b`)
	for _, clock := range []string{"clock.lua", "test_clock.lua"} {
		for a := range oneLimit {
			src, err := oneLimitSource(clock, core.Algorithm(a))
			require.NoError(t, err)
			for i, line := range strings.Split(src, "\n") {
				code, _, _ := strings.Cut(line, "--")
				assert.False(t, function.MatchString(code), "%s with %s, line %d: %s", oneLimit[a].name, clock, i+1, line)
			}
		}
	}
}
