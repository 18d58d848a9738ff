package httplimit_test

import (
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/stretchr/testify/assert"
)

// RemoteAddrKey returns an IPv4 peer's host verbatim, to save the
// allocation of formatting it again; that is right only if it is always
// what formatting the parsed address gives. The seeds cover what
// netip.ParseAddr could accept in a non-canonical form (leading zeros,
// mapped and zoned addresses); `go test -fuzz FuzzRemoteAddrKey` explores
// further.
func FuzzRemoteAddrKey(f *testing.F) {
	for _, s := range []string{
		"203.0.113.7:1234", "0.0.0.0:1", "255.255.255.255:65535", "010.0.0.1:1", "1.2.3:1", "1.2.3.4.5:1",
		"[::ffff:203.0.113.7]:1", "[::ffff:cb00:7107]:1", "[fe80::1%eth0]:1", "[2001:db8:1:2:3:4:5:6]:443",
		"203.0.113.7", "::1", "1.2.3.4%eth0:1", " 1.2.3.4:1", "1.2.3.04:1",
		"1.2.3.4:80:90", "1.2.3.4::1", "1.2.3.4:", "1.2.3.4:8]0", "1.2.3.4:[80", "[1.2.3.4]:1", "1.2.3.4]:1",
		"256.1.1.1:1", "1.2.3.4.:1", "1..2.3:1", ".1.2.3:1", "1.2.3.:1", "1.2.3.4x:1", "1.2.3.1000:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remoteAddr string) {
		got, err := httplimit.RemoteAddrKey(&http.Request{RemoteAddr: remoteAddr})
		want, ok := formattedPeer(remoteAddr)
		if !ok {
			assert.Error(t, err)
			return
		}
		assert.NoError(t, err)
		assert.Equal(t, want, got)
	})
}

// formattedPeer is RemoteAddrKey's documented result, computed the slow
// way: parse, unmap, drop the zone, format (IPv6 as its /64).
func formattedPeer(remoteAddr string) (string, bool) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return "", false
	}
	if a = a.Unmap().WithZone(""); a.Is4() {
		return a.String(), true
	}
	p, _ := a.Prefix(64)
	return p.String(), true
}
