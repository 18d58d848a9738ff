package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSafeIdentity(t *testing.T) {
	tests := []struct {
		name     string
		id       string
		verbatim bool
	}{
		{"IPv4", "203.0.113.7", true},
		{"IPv6 prefix", "2001:db8:1:2::/64", true},
		{"user id", "user_42", true},
		{"composite", Identity("k", "1.2.3.4"), true},
		{"64 safe bytes", strings.Repeat("a", 64), true},
		{"65 safe bytes", strings.Repeat("a", 65), false},
		{"empty", "", false},
		{"open brace", "a{b", false},
		{"close brace", "a}b", false},
		{"space", "a b", false},
		{"control byte", "a\x00b", false},
		{"newline", "a\nb", false},
		{"unicode", "usuário", false},
		{"10 KB", strings.Repeat("x", 10<<10), false},
		{"looks hashed", "~abc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SafeIdentity(tt.id)
			if tt.verbatim {
				assert.Equal(t, tt.id, got)
				return
			}
			assert.NotEqual(t, tt.id, got)
			assert.True(t, strings.HasPrefix(got, "~"), got)
			assert.Len(t, got, 23)
			assert.Equal(t, got, SafeIdentity(tt.id), "stable")
			assert.NotContains(t, got, "{")
			assert.NotContains(t, got, "}")
		})
	}
}

func TestSafeIdentityNeverCollidesForDistinctInputs(t *testing.T) {
	inputs := []string{"", "~", "a", "a{", "a}", "{a}", "a\x00", "a\x01", strings.Repeat("x", 65), strings.Repeat("x", 66),
		Identity("a:b", "c"), Identity("a", "b:c"), "~" + SafeIdentity("a{")[1:]}
	seen := map[string]string{}
	for _, in := range inputs {
		out := SafeIdentity(in)
		prev, dup := seen[out]
		require.False(t, dup, "%q and %q both map to %q", prev, in, out)
		seen[out] = in
	}
}

func TestIdentityIsUnambiguous(t *testing.T) {
	tests := []struct {
		a, b []string
	}{
		{[]string{"a:b", "c"}, []string{"a", "b:c"}},
		{[]string{"a|b", "c"}, []string{"a", "b|c"}},
		{[]string{"ab", ""}, []string{"a", "b"}},
		{[]string{"1:a"}, []string{"1", "a"}},
		{[]string{""}, []string{}},
	}
	for _, tt := range tests {
		assert.NotEqual(t, Identity(tt.a...), Identity(tt.b...), "%q vs %q", tt.a, tt.b)
	}
	assert.Equal(t, "3:abc|7:1.2.3.4", Identity("abc", "1.2.3.4"))
}

func TestKeyBuilder(t *testing.T) {
	b, err := NewKeyBuilder("app:rl")
	require.NoError(t, err)
	limits := []Limit{PerSecond(10), PerDay(100).WithName("day").WithAlgorithm(SlidingLog)}

	assert.Equal(t, "app:rl:{203.0.113.7}:10-per-1s:g", b.Key("203.0.113.7", limits[0]))
	assert.Equal(t, []string{"app:rl:{a}:10-per-1s:g", "app:rl:{a}:day:l"}, b.AppendKeys(nil, "a", limits))
	assert.Equal(t, "app:rl:{"+SafeIdentity("x}y")+"}:day:l", b.Key("x}y", limits[1]))

	_, err = NewKeyBuilder("a{b")
	assert.ErrorContains(t, err, "key prefix")
}

// The bit set of safe identity bytes is exactly the documented set:
// name bytes and ":@/+=!*|".
func TestSafeIdentityBytes(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		want := isNameByte(b) || strings.IndexByte(":@/+=!*|", b) >= 0
		id := string([]byte{b})
		assert.Equal(t, want, SafeIdentity(id) == id, "byte %#x", c)
	}
}
