package keyfunc_test

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/keyfunc"
)

func TestShorthandsAreTheirLongForms(t *testing.T) {
	tests := []struct {
		name      string
		header    string // the X-API-Key of the request
		short     keyfunc.Func
		long      keyfunc.Func
		wantNoKey bool
	}{
		{"ByIP", "", keyfunc.ByIP(), keyfunc.Must(keyfunc.PeerIP()), false},
		{"ByHeader with a key", "k-123", keyfunc.ByHeader("X-API-Key"), keyfunc.Must(keyfunc.Header("X-API-Key")), false},
		{"ByHeader without one", "", keyfunc.ByHeader("X-API-Key"), keyfunc.Must(keyfunc.Header("X-API-Key")), true},
		{"ByAPIKeyOrIP with a key", "k-123", keyfunc.ByAPIKeyOrIP("X-API-Key"),
			keyfunc.FirstOf(keyfunc.Must(keyfunc.Header("X-API-Key")), keyfunc.Must(keyfunc.PeerIP())), false},
		{"ByAPIKeyOrIP without one", "", keyfunc.ByAPIKeyOrIP("X-API-Key"),
			keyfunc.FirstOf(keyfunc.Must(keyfunc.Header("X-API-Key")), keyfunc.Must(keyfunc.PeerIP())), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "203.0.113.7:4242"
			if tt.header != "" {
				r.Header.Set("X-API-Key", tt.header)
			}
			want, wantErr := tt.long(r)
			got, err := tt.short(r)
			assert.Equal(t, want, got)
			assert.Equal(t, wantErr, err)
			if tt.wantNoKey {
				assert.ErrorIs(t, err, keyfunc.ErrNoKey)
			} else {
				require.NoError(t, err)
				assert.NotEmpty(t, got)
			}
		})
	}
}

func TestShorthandsPanicOnANameThatIsNoHeaderName(t *testing.T) {
	assert.Panics(t, func() { keyfunc.ByHeader("X API Key") })
	assert.Panics(t, func() { keyfunc.ByAPIKeyOrIP("") })
}
