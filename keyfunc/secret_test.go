package keyfunc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecretsAreHashed(t *testing.T) {
	apiKey := Must(Header("X-API-Key"))
	bearer := BearerToken()
	long := strings.Repeat("k", MaxSecretBytes)

	tests := []struct {
		name   string
		fn     Func
		lines  []hdr
		want   string // "" when the Func must fail with ErrNoKey
		secret string // must not appear in the identity
	}{
		{"Header(X-API-Key=s3cr3t)", apiKey, []hdr{{"X-API-Key", "s3cr3t"}}, "key:TnOMpVY8Bs_QAYKZkz1Y2w", "s3cr3t"},
		{"Header(x-api-key=s3cr3t) is case-insensitive", apiKey, []hdr{{"x-api-key", "s3cr3t"}}, "key:TnOMpVY8Bs_QAYKZkz1Y2w", "s3cr3t"},
		{"Header: first line counts", apiKey, []hdr{{"X-API-Key", "s3cr3t"}, {"X-API-Key", "other"}}, "key:TnOMpVY8Bs_QAYKZkz1Y2w", "s3cr3t"},
		{"Header: another key", apiKey, []hdr{{"X-API-Key", "tok-123"}}, "key:yJY0FL9sTIae6sX4oFfD3A", "tok-123"},
		{"Header: MaxSecretBytes is accepted", apiKey, []hdr{{"X-API-Key", long}}, "key:", long},
		{"Header: missing", apiKey, nil, "", ""},
		{"Header: empty", apiKey, []hdr{{"X-API-Key", ""}}, "", ""},
		{"Header: oversized", apiKey, []hdr{{"X-API-Key", long + "k"}}, "", ""},
		{"BearerToken(tok-123)", bearer, []hdr{{"Authorization", "Bearer tok-123"}}, "key:yJY0FL9sTIae6sX4oFfD3A", "tok-123"},
		{"BearerToken: scheme is case-insensitive", bearer, []hdr{{"Authorization", "bearer tok-123"}}, "key:yJY0FL9sTIae6sX4oFfD3A", "tok-123"},
		{"BearerToken: extra spaces", bearer, []hdr{{"Authorization", "Bearer   tok-123"}}, "key:yJY0FL9sTIae6sX4oFfD3A", "tok-123"},
		{"BearerToken: Basic scheme", bearer, []hdr{{"Authorization", "Basic dXNlcjpwYXNz"}}, "", ""},
		{"BearerToken: no token", bearer, []hdr{{"Authorization", "Bearer"}}, "", ""},
		{"BearerToken: blank token", bearer, []hdr{{"Authorization", "Bearer   "}}, "", ""},
		{"BearerToken: missing", bearer, nil, "", ""},
		{"BearerToken: X-API-Key is not read", bearer, []hdr{{"X-API-Key", "s3cr3t"}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(newRequest("203.0.113.7:1", tt.lines...))
			if tt.want == "" {
				assert.ErrorIs(t, err, ErrNoKey)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(got, tt.want), "identity %q does not start with %q", got, tt.want)
			assert.Len(t, got, len("key:")+22)
			assert.NotContains(t, got, tt.secret)
		})
	}
}
