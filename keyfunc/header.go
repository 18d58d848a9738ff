package keyfunc

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// TrustedHeader keys by the single address in header name, written by a
// trusted proxy or CDN: CF-Connecting-IP (Cloudflare), True-Client-IP
// (Akamai, Cloudflare Enterprise), Fly-Client-IP (Fly.io), X-Real-IP (nginx,
// see [XRealIP]).
//
// The header is read only when the peer is in trusted, the proxy's or
// CDN's published ranges. It must occur once and hold one address
// ("203.0.113.7", "2001:db8::7", "[2001:db8::7]", optionally with a port);
// a missing, repeated, list-valued or malformed header, or one longer than
// [MaxHeaderBytes], falls back to the peer.
//
// Safe only if the proxy overwrites the header on every request. Several
// products pass a client-sent True-Client-IP or similar header through
// unless told otherwise; check before trusting one. opts set the address
// grouping ([WithIPv6Prefix]).
func TrustedHeader(name string, trusted []netip.Prefix, opts ...Option) (Func, error) {
	return trustedHeader("TrustedHeader", name, trusted, opts)
}

// XRealIP keys by the X-Real-IP header of a trusted proxy. It is
// TrustedHeader("X-Real-IP", trusted, opts...): safe behind nginx or
// another proxy that sets the header on every request, whatever the client
// sent.
func XRealIP(trusted []netip.Prefix, opts ...Option) (Func, error) {
	return trustedHeader("XRealIP", "X-Real-IP", trusted, opts)
}

func trustedHeader(fn, name string, trusted []netip.Prefix, opts []Option) (Func, error) {
	if !isToken(name, "") {
		return nil, fmt.Errorf("ratelimit: keyfunc: %s: name: %q is not a header name", fn, name)
	}
	ts, err := newTrustSet(fn, trusted)
	if err != nil {
		return nil, err
	}
	o, err := newOptions(fn, opts)
	if err != nil {
		return nil, err
	}
	key := http.CanonicalHeaderKey(name)
	return behindTrusted(o, ts, name, func(r *http.Request) (netip.Addr, bool) {
		return singleAddr(r.Header[key])
	}), nil
}

// singleAddr parses a header that must hold exactly one address.
func singleAddr(lines []string) (netip.Addr, bool) {
	if len(lines) != 1 || len(lines[0]) > MaxHeaderBytes {
		return netip.Addr{}, false
	}
	return parseNode(strings.Trim(lines[0], " \t"), false)
}
