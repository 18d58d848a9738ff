package keyfunc

import (
	"net/http"
	"net/netip"
)

// Limits on the proxy headers a [Func] reads. A header over either limit is
// treated like garbage: the client is keyed by the peer address. Real chains
// are a handful of hops; the limits bound the work an attacker can cause.
const (
	// MaxHeaderBytes is the most bytes read from one proxy header, all its
	// lines together.
	MaxHeaderBytes = 4096
	// MaxHops is the most entries (addresses, or RFC 7239 elements) in one
	// proxy header, all its lines together.
	MaxHops = 32
)

// walkTrusted walks hops right to left, nearest proxy first, and returns
// the first address that is not trusted: the client as seen by the
// outermost trusted proxy. If every hop is trusted, the client is the
// furthest one. ok is false when the walk meets an unusable entry before an
// untrusted address, or when there are no hops.
func walkTrusted(hops []netip.Addr, ts trustSet) (netip.Addr, bool) {
	for i := len(hops) - 1; i >= 0; i-- {
		a := hops[i]
		if !a.IsValid() {
			return netip.Addr{}, false
		}
		if !ts.contains(a) {
			return a, true
		}
	}
	if len(hops) == 0 {
		return netip.Addr{}, false
	}
	return hops[0], true
}

// headerBytes returns the total length of lines.
func headerBytes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// behindTrusted returns a Func for a header-based trust model: the client is
// the peer, unless the peer is in ts and pick finds a client address in the
// request.
func behindTrusted(o options, ts trustSet, pick func(*http.Request) (netip.Addr, bool)) Func {
	return func(r *http.Request) (string, error) {
		peer, err := peerAddr(r)
		if err != nil {
			return "", err
		}
		if !ts.contains(peer) {
			return o.key(peer), nil
		}
		if a, ok := pick(r); ok {
			return o.key(a), nil
		}
		return o.key(peer), nil
	}
}
