package keyfunc

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/ratelimitkit/ratelimit/internal/errwrap"
	"github.com/ratelimitkit/ratelimit/internal/proxyhint"
)

// PeerIP keys by the address of the TCP peer, r.RemoteAddr, as the
// middleware's default key ([httplimit.RemoteAddrKey]) does, and cannot be
// spoofed: safe whenever clients connect to this server directly. Behind
// a proxy every client would share the proxy's address; use
// [XForwardedFor], [Forwarded] or [TrustedHeader] there.
//
// Because that is the likeliest misconfiguration of a rate limiter, the
// Func warns once per cause on slog's default logger when its requests look
// proxied: they carry X-Forwarded-For or Forwarded, or nine in ten of its
// first thousand come from at most four private or loopback addresses.
//
// When RemoteAddr holds no IP address (a Unix socket listener), the Func
// fails with an error wrapping [ErrNoKey].
func PeerIP(opts ...Option) (Func, error) {
	o, err := newOptions("PeerIP", opts)
	if err != nil {
		return nil, err
	}
	hint := proxyhint.New("ratelimit: keyfunc: ", "keyfunc.PeerIP",
		"Key by keyfunc.XForwardedFor or keyfunc.Forwarded with the proxies' prefixes instead.")
	return func(r *http.Request) (string, error) {
		hint.Observe(r)
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
		return netip.Addr{}, errwrap.Wrap(errPrefix, fmt.Sprintf("remote address %.64q is not an IP address", r.RemoteAddr), ErrNoKey)
	}
	return clean(a), nil
}
