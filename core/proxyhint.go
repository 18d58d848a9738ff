package core

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
)

// proxyHint watches the requests of a [Middleware] that keys by the peer
// address ([RemoteAddrKey], the default) for the likeliest misconfiguration
// of a rate limiter: a server behind a proxy or load balancer, where every
// client has the proxy's address and shares one quota. It warns once per
// cause on slog's default logger, the way express-rate-limit detects the
// same mistake:
//   - a request carries X-Forwarded-For or Forwarded: a proxy is in front,
//     and its header is ignored;
//   - of the first [proxyHintSample] requests, nine in ten or more come from
//     at most [proxyHintPeers] private or loopback addresses.
//
// After the sample, a request costs one atomic load.
type proxyHint struct {
	headerWarned atomic.Bool
	done         atomic.Bool // the sample is complete

	mu      sync.Mutex
	seen    int
	private int
	peers   map[netip.Addr]int
}

const (
	proxyHintSample = 1000
	proxyHintPeers  = 4
)

func newProxyHint() *proxyHint {
	return &proxyHint{peers: make(map[netip.Addr]int, proxyHintPeers+1)}
}

// observe looks at r; it never changes how r is limited.
func (h *proxyHint) observe(r *http.Request) {
	if !h.headerWarned.Load() && (len(r.Header["X-Forwarded-For"]) > 0 || len(r.Header["Forwarded"]) > 0) &&
		h.headerWarned.CompareAndSwap(false, true) {
		slog.Warn("ratelimit: requests carry X-Forwarded-For or Forwarded, but the limiter keys by the peer " +
			"address: behind a proxy every client shares the proxy's quota. Use a keyfunc that reads the " +
			"header from trusted proxies (keyfunc.XForwardedFor, keyfunc.Forwarded) with core.HTTPKeyFunc.")
	}
	if h.done.Load() {
		return
	}
	h.count(peerOf(r))
}

func (h *proxyHint) count(a netip.Addr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == proxyHintSample {
		return
	}
	h.seen++
	if a.IsPrivate() || a.IsLoopback() {
		h.private++
		if len(h.peers) <= proxyHintPeers {
			h.peers[a]++
		}
	}
	if h.seen < proxyHintSample {
		return
	}
	h.done.Store(true)
	if h.private*10 >= h.seen*9 && len(h.peers) <= proxyHintPeers {
		slog.Warn("ratelimit: most requests come from a handful of private addresses: the server is likely "+
			"behind a proxy or load balancer, and every client shares its quota. Configure trusted proxies "+
			"(keyfunc.XForwardedFor with their prefixes) with core.HTTPKeyFunc.",
			slog.Int("requests", h.seen), slog.Int("private", h.private), slog.Int("addresses", len(h.peers)))
	}
}

// peerOf returns the address of r's peer, or the zero Addr.
func peerOf(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}
