package keylayout

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestEpochIsTheFirstOf2024(t *testing.T) {
	epoch := time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, epoch.Unix(), int64(EpochUnix))
	assert.Equal(t, int64(0), EpochMicros(epoch))
	assert.Equal(t, int64(1_500_001), EpochMicros(epoch.Add(1500001*time.Microsecond+999)), "rounded down")
	assert.Equal(t, int64(-1), EpochMicros(epoch.Add(-time.Nanosecond)), "rounded down before the epoch too")
	assert.True(t, epoch.Add(90*time.Second).Equal(FromEpochMicros(90_000_000)))
}

// Key and Parse are each other's inverse for every safe identity, and
// the Cluster hash tag of a key is the identity.
func TestParseSplitsWhatKeyBuilds(t *testing.T) {
	ids := []string{"alice", "203.0.113.7", "2001:db8::/64", Identity("/x", "1.2.3.4"),
		SafeIdentity("user with spaces"), SafeIdentity("a}b{"), SafeIdentity(strings.Repeat("x", 65))}
	for _, prefix := range []string{"rl", "app:rl"} {
		for _, id := range ids {
			key := Key(prefix, id, "per-minute", "g")
			t.Run(key, func(t *testing.T) {
				assert.Equal(t, Name{Prefix: prefix, Tag: id, Limit: "per-minute", Algorithm: "g", HasTag: true, OK: true}, Parse(key))
				start, end := TagBounds(key)
				assert.Equal(t, id, key[start:end])
				assert.Equal(t, prefix+":{"+id+"}", Client(prefix, id))
				assert.True(t, strings.HasPrefix(key, ClientHead(prefix, id)))
				assert.True(t, ValidTag(id))
			})
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		key  string
		want Name
	}{
		{"rl:{alice}:burst:g", Name{Prefix: "rl", Tag: "alice", Limit: "burst", Algorithm: "g", HasTag: true, OK: true}},
		{"rl:api:{1.2.3.4}:daily:f", Name{Prefix: "rl:api", Tag: "1.2.3.4", Limit: "daily", Algorithm: "f", HasTag: true, OK: true}},
		{"rl:{legacy}", Name{}},
		{"rl:{legacy}:old", Name{Prefix: "rl", Tag: "legacy", HasTag: true}},
		{"rl:{a}:x:", Name{Prefix: "rl", Tag: "a", HasTag: true}},
		{"rl:{a}:x:g:h", Name{Prefix: "rl", Tag: "a", HasTag: true}},
		{"rl:{}:x:g", Name{}},
		{"rl:session:42", Name{}},
		{":{a}:x:g", Name{}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			assert.Equal(t, tt.want, Parse(tt.key))
		})
	}
}

func TestValidTag(t *testing.T) {
	tests := []struct {
		tag  string
		want bool
	}{
		{"alice", true},
		{"~abc", true},
		{"", false},
		{"a b", false},
		{"a{b", false},
		{"a}b", false},
		{"a\x7fb", false},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			assert.Equal(t, tt.want, ValidTag(tt.tag))
		})
	}
}

// The control keys of a prefix share one hash tag that no identity gets,
// and parse as control keys, not as a client's.
func TestControlKeys(t *testing.T) {
	parts := []string{ControlRecords, ControlExpiries, ControlLog, ControlGeneration, ControlTrimmed}
	for _, part := range parts {
		key := ControlKey("rl:api", part)
		assert.Equal(t, "rl:api:{~ctl}:"+part, key)
		start, end := TagBounds(key)
		assert.Equal(t, ControlTag, key[start:end])
		n := Parse(key)
		assert.True(t, n.IsControl(), key)
		assert.Equal(t, "rl:api", n.Prefix)
	}
	for _, id := range []string{"~ctl", "{~ctl}", "x}:{~ctl", ""} {
		assert.NotEqual(t, ControlTag, SafeIdentity(id), "identity %q", id)
	}
	assert.False(t, Parse(Key("rl", "alice", "daily", "f")).IsControl())
}

func TestValidPrefix(t *testing.T) {
	tests := []struct {
		prefix string
		want   bool
	}{
		{"rl", true},
		{"app:rl-1.v_2", true},
		{strings.Repeat("p", 64), true},
		{strings.Repeat("p", 65), false},
		{"", false},
		{"rl{", false},
		{"r l", false},
		{"rl/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			assert.Equal(t, tt.want, ValidPrefix(tt.prefix))
		})
	}
}

func TestLockoutKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{Key("rl", "alice", "login", "g"), "rl:{alice}:login:x"},
		{Key("app:rl", "2001:db8::/64", "per-minute", "c"), "app:rl:{2001:db8::/64}:per-minute:x"},
		{Key("rl", SafeIdentity("a}b{"), "1-per-1s", "l"), "rl:{" + SafeIdentity("a}b{") + "}:1-per-1s:x"},
		{"no-colon", "no-colon:x"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			assert.Equal(t, tt.want, LockoutKey(tt.key))
			assert.Equal(t, "pre"+tt.want, string(AppendLockoutKey([]byte("pre"), tt.key)))
		})
	}
	n := Parse(LockoutKey(Key("rl", "alice", "login", "g")))
	assert.Equal(t, Name{Prefix: "rl", Tag: "alice", Limit: "login", Algorithm: LockoutTag, HasTag: true, OK: true}, n,
		"a lockout key follows the layout, with the lockout tag")
}
