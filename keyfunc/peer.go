package keyfunc

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
)

// PeerIP keys by the address of the TCP peer, r.RemoteAddr, as the
// middleware's default key ([core.RemoteAddrKey]) does, and cannot be
// spoofed: safe whenever clients connect to this server directly. Behind
// a proxy every client would share the proxy's address; use
// [XForwardedFor], [Forwarded] or [TrustedHeader] there.
//
// When RemoteAddr holds no IP address (a Unix socket listener), the Func
// fails with an error wrapping [ErrNoKey].
func PeerIP(opts ...Option) (Func, error) {
	o, err := newOptions("PeerIP", opts)
	if err != nil {
		return nil, err
	}
	return func(r *http.Request) (string, error) {
		peer, err := peerAddr(r)
		if err != nil {
			return "", err
		}
		return o.key(peer), nil
	}, nil
}

// peerAddr parses r.RemoteAddr, "host:port" as net/http sets it or a bare
// address as tests often do, and returns it cleaned.
func peerAddr(r *http.Request) (netip.Addr, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("ratelimit: keyfunc: remote address %.64q is not an IP address: %w", r.RemoteAddr, ErrNoKey)
	}
	return clean(a), nil
}
