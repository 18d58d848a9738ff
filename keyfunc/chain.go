package keyfunc

import (
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
)

// Limits on the proxy headers a [Func] reads. A list header (X-Forwarded-For,
// Forwarded) is read from its right end, where the nearest proxy wrote, and
// only as far as either limit: what a client pads on the left is never
// reached, so padding buys it nothing. Real chains are a handful of hops;
// the limits bound the work an attacker can cause.
const (
	// MaxHeaderBytes is the most bytes read from one proxy header, all its
	// lines together, counted from its right end.
	MaxHeaderBytes = 4096
	// MaxHops is the most entries (addresses, or RFC 7239 elements) read
	// from one proxy header, all its lines together, counted from its right
	// end.
	MaxHops = 32
)

// walkTrusted walks hops right to left, nearest proxy first, and returns
// the first address that is not trusted: the client as seen by the
// outermost trusted proxy. If every hop is trusted, the client is the
// furthest one, unless cut says that entries left of hops were not read.
// ok is false when the walk meets an unusable entry before an untrusted
// address, when it runs out of hops that were read, or when there are none.
func walkTrusted(hops []netip.Addr, cut bool, ts trustSet) (netip.Addr, bool) {
	for i := len(hops) - 1; i >= 0; i-- {
		a := hops[i]
		if !a.IsValid() {
			return netip.Addr{}, false
		}
		if !ts.contains(a) {
			return a, true
		}
	}
	if len(hops) == 0 || cut {
		return netip.Addr{}, false
	}
	return hops[0], true
}

// lastElements returns the rightmost elements of a list header, oldest
// first: its lines joined in order and split at ',' (outside quoted-strings
// when quoted is true). It reads from the right end and stops after limit
// elements or [MaxHeaderBytes] bytes; an element that does not fit in the
// bytes whole is not returned. cut reports whether the header holds
// elements left of the returned ones.
//
// Each line is split from its right end, so the elements a proxy appended
// are found whatever garbage a client put before them.
func lastElements(lines []string, limit int, quoted bool) (elems []string, cut bool) {
	budget := MaxHeaderBytes
	for i := len(lines) - 1; i >= 0 && !cut; i-- {
		line := lines[i]
		for {
			if len(elems) == limit || budget < 0 {
				cut = true
				break
			}
			tail := line[len(line)-min(len(line), budget):]
			j := lastSeparator(tail, quoted)
			if j < 0 && len(tail) < len(line) {
				cut = true // The element continues left of the bytes read.
				break
			}
			elems = append(elems, tail[j+1:])
			budget -= len(tail) - j // The element and the separator before it.
			if j < 0 {
				break
			}
			line = line[:len(line)-len(tail)+j]
		}
	}
	slices.Reverse(elems)
	return elems, cut
}

// lastSeparator returns the index of the last ',' of s, or -1. With quoted,
// a ',' inside a quoted-string does not count: s is read right to left,
// outside a quoted-string at its end, and a '"' preceded by an odd number
// of backslashes is an escaped one.
func lastSeparator(s string, quoted bool) int {
	if !quoted {
		return strings.LastIndexByte(s, ',')
	}
	inQuotes := false
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ',':
			if !inQuotes {
				return i
			}
		case '"':
			if !escaped(s, i) {
				inQuotes = !inQuotes
			}
		}
	}
	return -1
}

// escaped reports whether s[i] is preceded by an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for i > 0 && s[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// behindTrusted returns a Func for a header-based trust model: the client is
// the peer, unless the peer is in ts and pick finds a client address in the
// request. The first time header arrives from a peer outside ts, it warns
// on slog's default logger: either a proxy in front is missing from ts
// (and every client shares its quota) or a client tried to choose its
// address.
func behindTrusted(o options, ts trustSet, header string, pick func(*http.Request) (netip.Addr, bool)) Func {
	header = http.CanonicalHeaderKey(header)
	var warned atomic.Bool
	return func(r *http.Request) (string, error) {
		peer, err := peerAddr(r)
		if err != nil {
			return "", err
		}
		if !ts.contains(peer) {
			if len(r.Header[header]) > 0 && !warned.Load() && warned.CompareAndSwap(false, true) {
				warnUntrusted(header, peer)
			}
			return o.key(peer), nil
		}
		if a, ok := pick(r); ok {
			return o.key(a), nil
		}
		return o.key(peer), nil
	}
}

// warnUntrusted logs, once per Func, a proxy header from an untrusted peer.
// The peer is named only when it is a private or loopback address (a
// proxy's, not a client's).
func warnUntrusted(header string, peer netip.Addr) {
	attrs := []any{slog.String("header", header)}
	if peer.IsPrivate() || peer.IsLoopback() {
		attrs = append(attrs, slog.String("peer", peer.String()))
	}
	slog.Warn("ratelimit: keyfunc: a proxy header arrived from a peer outside the trusted prefixes and was "+
		"ignored: if a proxy stands in front of this server, add its prefix to the trusted ones (until then "+
		"every client shares its quota); otherwise a client tried to choose its own address", attrs...)
}
