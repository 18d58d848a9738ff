package keyfunc

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConstructorsRejectBadConfig(t *testing.T) {
	ok := netip.MustParsePrefix("10.0.0.0/8")
	tests := []struct {
		name    string
		build   func() (Func, error)
		wantErr string
	}{
		{"XForwardedFor(no prefixes)", func() (Func, error) { return XForwardedFor(nil) }, "trusted: no proxy prefix"},
		{"XForwardedFor(zero prefix)", func() (Func, error) { return XForwardedFor([]netip.Prefix{ok, {}}) }, "trusted[1]: invalid prefix"},
		{"XForwardedFor(0.0.0.0/0)", func() (Func, error) {
			return XForwardedFor([]netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")})
		}, "trusted[0]: 0.0.0.0/0 trusts every address"},
		{"Forwarded(::/0)", func() (Func, error) {
			return Forwarded([]netip.Prefix{ok, netip.MustParsePrefix("::/0")})
		}, "trusted[1]: ::/0 trusts every address"},
		{"XRealIP(IPv4-mapped prefix)", func() (Func, error) {
			return XRealIP([]netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/104")})
		}, "trusted[0]: IPv4-mapped prefix"},
		{"TrustedHeader(empty name)", func() (Func, error) { return TrustedHeader("", []netip.Prefix{ok}) }, "TrustedHeader: name"},
		{"TrustedHeader(name with space)", func() (Func, error) { return TrustedHeader("CF Connecting IP", []netip.Prefix{ok}) }, "TrustedHeader: name"},
		{"PeerIP(WithIPv4Prefix(0))", func() (Func, error) { return PeerIP(WithIPv4Prefix(0)) }, "PeerIP: IPv4 prefix 0"},
		{"PeerIP(WithIPv4Prefix(33))", func() (Func, error) { return PeerIP(WithIPv4Prefix(33)) }, "PeerIP: IPv4 prefix 33"},
		{"XForwardedFor(WithIPv6Prefix(129))", func() (Func, error) { return XForwardedFor([]netip.Prefix{ok}, WithIPv6Prefix(129)) }, "XForwardedFor: IPv6 prefix 129"},
		{"XForwardedForHops(0)", func() (Func, error) { return XForwardedForHops(0) }, "n = 0"},
		{"XForwardedForHops(MaxHops+1)", func() (Func, error) { return XForwardedForHops(MaxHops + 1) }, "n = 33"},
		{"Header(empty name)", func() (Func, error) { return Header("") }, "Header: name"},
		{"FormValue(empty name)", func() (Func, error) { return FormValue("") }, "FormValue: name"},
		{"FormValueFunc(empty name)", func() (Func, error) { return FormValueFunc("", strings.TrimSpace) }, "FormValueFunc: name"},
		{"FormValueFunc(nil normalize)", func() (Func, error) { return FormValueFunc("account", nil) }, "FormValueFunc: normalize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.build()
			assert.Nil(t, f)
			assert.ErrorContains(t, err, tt.wantErr)
			assert.ErrorContains(t, err, "ratelimit: keyfunc: ")
		})
	}
}

func TestTrustedPrefixesAreMasked(t *testing.T) {
	f, err := XForwardedFor([]netip.Prefix{netip.MustParsePrefix("10.1.2.3/8")})
	require.NoError(t, err)
	got, err := f(newRequest("10.200.0.1:1", xff("203.0.113.7")))
	require.NoError(t, err)
	assert.Equal(t, "203.0.113.7", got)
}

func TestMustPanicsOnError(t *testing.T) {
	assert.PanicsWithError(t, "ratelimit: keyfunc: XForwardedForHops: n = 0 not in [1, 32]", func() {
		Must(XForwardedForHops(0))
	})
}
