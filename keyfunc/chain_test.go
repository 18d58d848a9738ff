package keyfunc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLastElements(t *testing.T) {
	full := strings.Repeat("x", MaxHeaderBytes)
	tests := []struct {
		lines   []string
		limit   int
		quoted  bool
		want    []string
		wantCut bool
	}{
		{nil, MaxHops, false, nil, false},
		{[]string{""}, MaxHops, false, []string{""}, false},
		{[]string{"a, b", "c"}, MaxHops, false, []string{"a", " b", "c"}, false},
		{[]string{"a,,b,"}, MaxHops, false, []string{"a", "", "b", ""}, false},
		{[]string{"a,b,c"}, 2, false, []string{"b", "c"}, true},
		{[]string{"a,b", "c"}, 1, false, []string{"c"}, true},
		{[]string{`a="x,y", b`}, MaxHops, false, []string{`a="x`, `y"`, " b"}, false},
		{[]string{`a="x,y", b`}, MaxHops, true, []string{`a="x,y"`, " b"}, false},
		{[]string{`a="x\",y", b`}, MaxHops, true, []string{`a="x\",y"`, " b"}, false},
		{[]string{`a="x\\",y`}, MaxHops, true, []string{`a="x\\"`, "y"}, false},
		{[]string{`for="6, for=7`}, MaxHops, true, []string{`for="6`, " for=7"}, false},
		{[]string{full}, MaxHops, false, []string{full}, false},
		{[]string{"x" + full}, MaxHops, false, nil, true},
		{[]string{full[1:], "y"}, MaxHops, false, []string{"y"}, true},
		{[]string{"", full[1:]}, MaxHops, false, []string{"", full[1:]}, false},
		{[]string{"a," + full[2:]}, MaxHops, false, []string{"a", full[2:]}, false},
		{[]string{"ab," + full[2:]}, MaxHops, false, []string{full[2:]}, true},
		{[]string{"y" + full + ",a"}, MaxHops, false, []string{"a"}, true},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("lastElements(%.24q, %d, quoted=%t)", tt.lines, tt.limit, tt.quoted)
		t.Run(name, func(t *testing.T) {
			got, cut := lastElements(tt.lines, tt.limit, tt.quoted)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantCut, cut)
		})
	}
}
