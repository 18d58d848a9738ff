package keyfunc

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

const headerXFF = "X-Forwarded-For"

// XForwardedFor keys by the client address in X-Forwarded-For, for servers
// behind proxies whose addresses are the trusted prefixes (a load balancer
// subnet, a CDN's published ranges).
//
// The header is read only when the peer is trusted. All its lines are
// joined in order and walked right to left, nearest proxy first; trusted
// addresses are skipped and the first untrusted one is the client. What a
// client wrote into the header itself lies to the left of that address and
// is never read. If every entry is trusted, the leftmost is the client. An
// entry may carry a port ("192.0.2.7:5100", "[2001:db8::7]:5100").
//
// Only the rightmost [MaxHops] entries within the last [MaxHeaderBytes]
// bytes are read, so a client that pads the header still gets its own
// address, not the peer's. An entry that is not an address, an empty
// header, or a walk that needs an entry beyond those limits (every entry
// read is trusted, or the next one is cut by the byte limit) falls back to
// the peer.
//
// Safe when every path to this server passes through a trusted proxy that
// appends the address it received the request from; list every proxy
// layer's prefixes, or the walk stops at an untrusted inner proxy and keys
// all its clients together. opts set the address grouping ([WithIPv6Prefix]).
func XForwardedFor(trusted []netip.Prefix, opts ...Option) (Func, error) {
	ts, err := newTrustSet("XForwardedFor", trusted)
	if err != nil {
		return nil, err
	}
	o, err := newOptions("XForwardedFor", opts)
	if err != nil {
		return nil, err
	}
	return behindTrusted(o, ts, headerXFF, func(r *http.Request) (netip.Addr, bool) {
		hops, cut := xffChain(r.Header.Values(headerXFF), MaxHops)
		return walkTrusted(hops, cut, ts)
	}), nil
}

// XForwardedForHops keys by the X-Forwarded-For entry written by the
// outermost of n proxies, for deployments that know how many proxies stand
// in front of the server but not their addresses (autoscaled proxy pools).
// With n = 1, a single load balancer, the client is the last entry.
//
// All header lines are joined in order; the client is the n-th entry from
// the right, and entries left of it are never read. A shorter header, an
// unusable entry at or right of that position, or an n-th entry that does
// not lie within the last [MaxHeaderBytes] bytes falls back to the peer.
// n must be 1 to [MaxHops].
//
// Safe only if the server cannot be reached except through exactly n
// proxies that each append to the header: the peer is not checked. If a
// proxy layer is added or removed, n silently becomes wrong and clients can
// choose their address; prefer [XForwardedFor] with prefixes when you can.
func XForwardedForHops(n int, opts ...Option) (Func, error) {
	if n < 1 || n > MaxHops {
		return nil, fmt.Errorf("ratelimit: keyfunc: XForwardedForHops: n = %d not in [1, %d]", n, MaxHops)
	}
	o, err := newOptions("XForwardedForHops", opts)
	if err != nil {
		return nil, err
	}
	return func(r *http.Request) (string, error) {
		peer, err := peerAddr(r)
		if err != nil {
			return "", err
		}
		if a, ok := nthFromRight(r.Header.Values(headerXFF), n); ok {
			return o.key(a), nil
		}
		return o.key(peer), nil
	}, nil
}

// nthFromRight returns the n-th X-Forwarded-For entry from the right, if it
// and every entry right of it are addresses.
func nthFromRight(lines []string, n int) (netip.Addr, bool) {
	hops, _ := xffChain(lines, n)
	if len(hops) < n {
		return netip.Addr{}, false
	}
	for _, a := range hops {
		if !a.IsValid() {
			return netip.Addr{}, false
		}
	}
	return hops[0], true
}

// xffChain returns the rightmost X-Forwarded-For entries, at most limit of
// them, oldest first ([lastElements]); an entry that is not an address is
// the zero netip.Addr. cut reports whether entries left of them were not
// read.
func xffChain(lines []string, limit int) (hops []netip.Addr, cut bool) {
	entries, cut := lastElements(lines, limit, false)
	hops = make([]netip.Addr, len(entries))
	for i, e := range entries {
		hops[i], _ = parseNode(strings.Trim(e, " \t"), false)
	}
	return hops, cut
}
