package sftest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseListAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []Item
	}{
		{"policy item", []string{`"default";q=100;w=10`}, []Item{
			{Value: BareItem{Kind: String, Str: "default"}, Params: []Param{
				{"q", BareItem{Kind: Integer, Int: 100}}, {"w", BareItem{Kind: Integer, Int: 10}}}}}},
		{"two items, OWS around comma", []string{`"a";r=1 ,	"b";r=2`}, []Item{
			{Value: BareItem{Kind: String, Str: "a"}, Params: []Param{{"r", BareItem{Kind: Integer, Int: 1}}}},
			{Value: BareItem{Kind: String, Str: "b"}, Params: []Param{{"r", BareItem{Kind: Integer, Int: 2}}}}}},
		{"two field lines", []string{`"a"`, `"b"`}, []Item{
			{Value: BareItem{Kind: String, Str: "a"}}, {Value: BareItem{Kind: String, Str: "b"}}}},
		{"escapes", []string{`"q\"b\\s"`}, []Item{{Value: BareItem{Kind: String, Str: `q"b\s`}}}},
		{"token and bare key", []string{`foo/bar:1;x;y=?0`}, []Item{
			{Value: BareItem{Kind: Token, Str: "foo/bar:1"}, Params: []Param{
				{"x", BareItem{Kind: Boolean, Int: 1}}, {"y", BareItem{Kind: Boolean, Int: 0}}}}}},
		{"repeated key overwrites in place", []string{`1;a=1;b=2;a=3`}, []Item{
			{Value: BareItem{Kind: Integer, Int: 1}, Params: []Param{
				{"a", BareItem{Kind: Integer, Int: 3}}, {"b", BareItem{Kind: Integer, Int: 2}}}}}},
		{"leading and trailing spaces", []string{`  -999999999999999  `}, []Item{{Value: BareItem{Kind: Integer, Int: -999999999999999}}}},
		{"empty list", []string{``}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseList(tt.in...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseListRejects(t *testing.T) {
	tests := []string{
		`"a",`,                    // trailing comma
		`"a" "b"`,                 // missing comma
		`"a`,                      // unterminated string
		`"a\x"`,                   // bad escape
		"\"a\tb\"",                // control byte in string
		`"é"`,                     // non-ASCII in string
		`1234567890123456`,        // 16 digits
		`1.5`,                     // decimal
		`:aGk=:`,                  // byte sequence
		`(1 2)`,                   // inner list
		`"a";Q=1`,                 // uppercase key
		`"a";q=`,                  // missing value
		"\t\"a\"",                 // leading tab is not SP
		`"a";q=1;`,                // empty key
		`-`,                       // sign without digits
		`?2`,                      // bad boolean
		`@date`,                   // date
		`%"display"`,              // display string
		`"a";q="x" trailing`,      // junk after item
		`"a",  ,"b"`,              // empty member
		`"a";q=1;w=1.0`,           // decimal parameter
		`"a"` + "\x00",            // NUL
		`"a";q=10000000000000000`, // too long
	}
	for _, in := range tests {
		t.Run(in, func(t *testing.T) {
			_, err := ParseList(in)
			assert.Error(t, err)
		})
	}
}

// FuzzParseList checks that the parser never panics and that whatever it
// accepts has only the supported kinds.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{`"a";q=1;w=2, "b";r=0`, `tok;x`, `"\\"`, `(1)`, `1.5`, `?1`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		items, err := ParseList(s)
		if err != nil {
			return
		}
		for _, it := range items {
			assert.Contains(t, []Kind{Integer, String, Token, Boolean}, it.Value.Kind)
		}
	})
}
