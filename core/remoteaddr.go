package core

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
)

// ErrNoRemoteAddr is wrapped by the error of [RemoteAddrKey] when
// r.RemoteAddr holds no IP address (a Unix socket listener).
var ErrNoRemoteAddr = errors.New("ratelimit: remote address is not an IP address")

// remoteAddrV6Bits groups IPv6 clients by their /64, the usual allocation
// of one subscriber, so rotating addresses inside it gains nothing.
const remoteAddrV6Bits = 64

// RemoteAddrKey is the default [KeyFunc]: the address of the TCP peer,
// r.RemoteAddr, which a client cannot spoof. IPv4-mapped IPv6 addresses are
// unmapped, zones dropped, and IPv6 addresses grouped by /64
// ("2001:db8:1:2::/64"), as keyfunc.PeerIP does by default.
//
// Behind a reverse proxy every client shares the proxy's address: use a
// proxy-aware extractor of the keyfunc package there.
func RemoteAddrKey(r *http.Request) (string, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return "", fmt.Errorf("ratelimit: remote address %.64q: %w", r.RemoteAddr, ErrNoRemoteAddr)
	}
	if a.Is4() {
		// ParseAddr accepts only the canonical dotted quad (no leading
		// zeros, four fields): host is a.String(), without its allocation.
		return host, nil
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String(), nil
	}
	p, _ := a.Prefix(remoteAddrV6Bits) // a is IPv6: /64 is in range.
	return p.String(), nil
}
