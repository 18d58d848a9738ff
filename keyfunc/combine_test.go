package keyfunc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// fixed returns a Func that always returns id.
func fixed(id string) Func {
	return func(*http.Request) (string, error) { return id, nil }
}

// failing returns a Func that always fails with err.
func failing(err error) Func {
	return func(*http.Request) (string, error) { return "", err }
}

// TestCompositeFormat pins the encoding core.Identity shares
// (internal/keylayout): it is part of every key, so a change would move
// every composite client to new keys.
func TestCompositeFormat(t *testing.T) {
	tests := []struct {
		parts []string
		want  string
	}{
		{[]string{"abc", "1.2.3"}, "3:abc|5:1.2.3"},
		{[]string{"x"}, "1:x"},
		{[]string{"", "b"}, "0:|1:b"},
		{[]string{"key:TnOMpVY8Bs_QAYKZkz1Y2w", "2001:db8::/64"}, "26:key:TnOMpVY8Bs_QAYKZkz1Y2w|13:2001:db8::/64"},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.want), func(t *testing.T) {
			funcs := make([]Func, len(tt.parts))
			for i, p := range tt.parts {
				funcs[i] = fixed(p)
			}
			got, err := Composite(funcs...)(newRequest("203.0.113.7:1"))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCompositeIsUnambiguous(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
	}{
		{"separator inside a part", []string{"a:b", "c"}, []string{"a", "b:c"}},
		{"pipe inside a part", []string{"a|1:b"}, []string{"a", "b"}},
		{"length prefix inside a part", []string{"1:a", "b"}, []string{"1", "a|1:b"}},
		{"empty part", []string{"", "ab"}, []string{"ab", ""}},
		{"part count", []string{"ab"}, []string{"ab", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotEqual(t, keylayout.Identity(tt.a...), keylayout.Identity(tt.b...))
		})
	}
}

func TestCompositeFailsWithItsPart(t *testing.T) {
	boom := errors.New("boom")
	r := newRequest("203.0.113.7:1")

	_, err := Composite(Must(PeerIP()), Must(Header("X-API-Key")))(r)
	assert.ErrorIs(t, err, ErrNoKey)
	assert.ErrorContains(t, err, "composite part 1")

	_, err = Composite(failing(boom), fixed("x"))(r)
	assert.ErrorIs(t, err, boom)
}

func TestCompositeAPIKeyAndIP(t *testing.T) {
	f := Composite(Must(Header("X-API-Key")), Must(PeerIP()))
	got, err := f(newRequest("203.0.113.7:1", hdr{"X-API-Key", "s3cr3t"}))
	require.NoError(t, err)
	assert.Equal(t, "26:key:TnOMpVY8Bs_QAYKZkz1Y2w|11:203.0.113.7", got)
}

func TestFirstOf(t *testing.T) {
	boom := errors.New("boom")
	apiKeyOrIP := FirstOf(Must(Header("X-API-Key")), Must(PeerIP()))
	tests := []struct {
		name    string
		fn      Func
		lines   []hdr
		want    string
		wantErr error
	}{
		{"API key present", apiKeyOrIP, []hdr{{"X-API-Key", "s3cr3t"}}, "key:TnOMpVY8Bs_QAYKZkz1Y2w", nil},
		{"API key missing, address", apiKeyOrIP, nil, "203.0.113.7", nil},
		{"API key empty, address", apiKeyOrIP, []hdr{{"X-API-Key", ""}}, "203.0.113.7", nil},
		{"other errors stop the search", FirstOf(failing(boom), fixed("x")), nil, "", boom},
		{"nothing found", FirstOf(failing(ErrNoKey), BearerToken()), nil, "", ErrNoKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(newRequest("203.0.113.7:1", tt.lines...))
			assert.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCombinatorsPanicOnMisuse(t *testing.T) {
	assert.Panics(t, func() { Composite() })
	assert.Panics(t, func() { Composite(fixed("a"), nil) })
	assert.Panics(t, func() { FirstOf() })
	assert.Panics(t, func() { FirstOf(nil) })
}

func TestMethod(t *testing.T) {
	tests := []struct {
		method string
		want   string
	}{
		{"GET", "GET"},
		{"HEAD", "HEAD"},
		{"POST", "POST"},
		{"PUT", "PUT"},
		{"PATCH", "PATCH"},
		{"DELETE", "DELETE"},
		{"CONNECT", "CONNECT"},
		{"OPTIONS", "OPTIONS"},
		{"TRACE", "TRACE"},
		{"", "GET"},
		{"get", "OTHER"},
		{"Post", "OTHER"},
		{"GET0", "OTHER"},
		{"GET499", "OTHER"},
		{"PROPFIND", "OTHER"},
		{strings.Repeat("X", 900<<10), "OTHER"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("Method(%.16q)", tt.method), func(t *testing.T) {
			r := newRequest("203.0.113.7:1")
			r.Method = tt.method
			got, err := Method()(r)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

type userKey struct{}

type userID string

func (u userID) String() string { return "u-" + string(u) }

func TestContextValue(t *testing.T) {
	tests := []struct {
		name      string
		value     any
		want      string
		wantNoKey bool
	}{
		{"string", "42", "ctx:42", false},
		{"fmt.Stringer", userID("7"), "ctx:u-7", false},
		{"int", 42, "ctx:42", false},
		{"int64", int64(-3), "ctx:-3", false},
		{"uint64", uint64(18446744073709551615), "ctx:18446744073709551615", false},
		{"missing", nil, "", true},
		{"empty string", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRequest("203.0.113.7:1")
			if tt.value != nil {
				r = r.WithContext(context.WithValue(r.Context(), userKey{}, tt.value))
			}
			got, err := ContextValue(userKey{})(r)
			if tt.wantNoKey {
				assert.ErrorIs(t, err, ErrNoKey)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestContextValueOfWrongTypeIsNotNoKey(t *testing.T) {
	r := newRequest("203.0.113.7:1")
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, 3.5))
	_, err := FirstOf(ContextValue(userKey{}), Must(PeerIP()))(r)
	require.Error(t, err)
	assert.NotErrorIs(t, err, ErrNoKey)
	assert.ErrorContains(t, err, "float64")
}
