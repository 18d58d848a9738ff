package recipes

import (
	"errors"
	"net/netip"

	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// Proxies describes what stands between the clients and this server, as
// the deployment's configuration says. The zero value means nothing: the
// TCP peer is the client.
type Proxies struct {
	// Trusted are the addresses of every proxy layer whose entries are
	// skipped: the load balancer's subnet, plus a CDN's published ranges
	// when the CDN is in front of it.
	Trusted []netip.Prefix
	// Header is a single-address header that the proxy at Trusted
	// overwrites on every request ("CF-Connecting-IP"), read instead of
	// X-Forwarded-For.
	Header string
	// Hops is the number of proxies in front of the server when their
	// addresses are unknown (an autoscaled pool); not with Trusted.
	Hops int
}

// ClientIP returns the key function of the client's address behind p.
func ClientIP(p Proxies) (keyfunc.Func, error) {
	switch {
	case p.Hops > 0 && (len(p.Trusted) > 0 || p.Header != ""):
		return nil, errors.New("recipes: Proxies: Hops and Trusted or Header contradict each other")
	case p.Hops > 0:
		// Unsafe if anyone can reach the server, or an inner proxy, directly:
		// the peer is not checked. Firewall it to the proxies.
		return keyfunc.XForwardedForHops(p.Hops)
	case p.Header != "":
		// Unsafe if the proxy passes a header the client sent through.
		return keyfunc.TrustedHeader(p.Header, p.Trusted)
	case len(p.Trusted) > 0:
		// A layer missing from Trusted keys all its clients as one; never
		// a spoofing hole.
		return keyfunc.XForwardedFor(p.Trusted)
	}
	return keyfunc.PeerIP()
}
