// Package proxyhint watches the requests of something that keys clients
// by the TCP peer address for the likeliest misconfiguration of a rate
// limiter: a server behind a proxy or load balancer, where every client
// has the proxy's address and shares one quota. It warns once per cause on
// slog's default logger, the way express-rate-limit detects the same
// mistake:
//   - a request carries X-Forwarded-For or Forwarded: a proxy is in front,
//     and its header is ignored;
//   - of the first [Sample] requests, nine in ten or more come from at most
//     [Peers] private or loopback addresses.
//
// core's default key (httplimit.RemoteAddrKey) and keyfunc.PeerIP share it, so
// the examples, which key by keyfunc.PeerIP when no proxy is trusted, say
// so as the middleware's default does. It imports no project package.
package proxyhint

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
)

// The sample the private-address cause is judged on.
const (
	// Sample is how many requests, the first ones, are counted.
	Sample = 1000
	// Peers is the most private addresses that count as "a handful".
	Peers = 4
)

// A Hint watches one key function's requests. It is safe for concurrent
// use; after the sample, a request costs one atomic load and the header
// lookups until the header cause has warned.
type Hint struct {
	prefix, subject, fix string

	headerWarned atomic.Bool
	done         atomic.Bool // the sample is complete

	mu      sync.Mutex
	seen    int
	private int
	peers   map[netip.Addr]int
}

// New returns a Hint whose warnings begin with prefix ("ratelimit: "),
// name what keys by the peer address (subject: "the limiter",
// "keyfunc.PeerIP") and end with the fix to apply.
func New(prefix, subject, fix string) *Hint {
	return &Hint{prefix: prefix, subject: subject, fix: fix, peers: make(map[netip.Addr]int, Peers+1)}
}

// Observe looks at r; it never changes how r is keyed.
func (h *Hint) Observe(r *http.Request) {
	if !h.headerWarned.Load() && (len(r.Header["X-Forwarded-For"]) > 0 || len(r.Header["Forwarded"]) > 0) &&
		h.headerWarned.CompareAndSwap(false, true) {
		slog.Warn(h.prefix + "requests carry X-Forwarded-For or Forwarded, but " + h.subject + " keys by the peer " +
			"address: behind a proxy every client shares the proxy's quota. " + h.fix)
	}
	if h.done.Load() {
		return
	}
	h.count(peerOf(r))
}

func (h *Hint) count(a netip.Addr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == Sample {
		return
	}
	h.seen++
	if a.IsPrivate() || a.IsLoopback() {
		h.private++
		if len(h.peers) <= Peers {
			h.peers[a]++
		}
	}
	if h.seen < Sample {
		return
	}
	h.done.Store(true)
	if h.private*10 >= h.seen*9 && len(h.peers) <= Peers {
		slog.Warn(h.prefix+"most requests come from a handful of private addresses, and "+h.subject+" keys by "+
			"the peer address: the server is likely behind a proxy or load balancer, and every client shares "+
			"its quota. "+h.fix,
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
