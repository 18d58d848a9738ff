package httplimit

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
	if host, ok := peerIPv4(r.RemoteAddr); ok {
		return host, nil
	}
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

// peerIPv4 returns the host of addr, and true, when addr is the common
// "a.b.c.d:port": a dotted quad that netip.ParseAddr accepts (four fields
// of one to three digits, at most 255, without leading zeros), then the
// only ':' of addr, then a port without '[' or ']'. The slow path of
// [RemoteAddrKey] returns that same host (net.SplitHostPort splits it off
// unchanged, and an IPv4 address is returned verbatim); on false it
// decides. It is one pass over addr, where SplitHostPort and ParseAddr
// take four.
func peerIPv4(addr string) (string, bool) {
	field, val, digits := 0, 0, 0
	for i := 0; i < len(addr); i++ {
		switch c := addr[i]; {
		case '0' <= c && c <= '9':
			if digits == 1 && val == 0 { // a leading zero
				return "", false
			}
			if val, digits = val*10+int(c-'0'), digits+1; val > 255 {
				return "", false
			}
		case c == '.' && digits > 0 && field < 3:
			field, val, digits = field+1, 0, 0
		case c == ':' && digits > 0 && field == 3:
			return addr[:i], plainPort(addr[i+1:])
		default:
			return "", false
		}
	}
	return "", false
}

// plainPort reports whether port holds none of ':', '[' and ']' (a loop:
// strings.IndexAny costs more on a port's few bytes).
func plainPort(port string) bool {
	for i := 0; i < len(port); i++ {
		if c := port[i]; c == ':' || c == '[' || c == ']' {
			return false
		}
	}
	return true
}
