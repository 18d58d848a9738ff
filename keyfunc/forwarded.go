package keyfunc

import (
	"net/http"
	"net/netip"
	"strings"
)

// Forwarded keys by the client address in the RFC 7239 Forwarded header,
// for servers behind proxies whose addresses are the trusted prefixes. It
// is [XForwardedFor] for the standard header: read only when the peer is
// trusted, elements walked right to left past trusted "for=" addresses, the
// first untrusted one is the client.
//
// Parsing follows RFC 7239: parameters are case-insensitive, values are
// tokens or quoted-strings, IPv6 is bracketed ("[2001:db8::7]:4711"), ports
// may be numbers or obfuscated. Unquoted values may also hold ':', '[' and
// ']', as some proxies write them. An element without "for=", with "for"
// twice, or whose node is "unknown" or obfuscated ("_hidden") has no usable
// address: reaching it in the walk falls back to the peer, as does
// malformed syntax. As in [XForwardedFor], only the rightmost [MaxHops]
// elements within the last [MaxHeaderBytes] bytes are read, and a walk that
// needs an element beyond them falls back to the peer.
//
// Each line is split into elements from its right end, so a proxy that
// appends its element to the client's line, instead of adding a line of its
// own, is read correctly even after a client's unterminated quote.
//
// Safe under the same conditions as [XForwardedFor]. opts set the address
// grouping ([WithIPv6Prefix]).
func Forwarded(trusted []netip.Prefix, opts ...Option) (Func, error) {
	ts, err := newTrustSet("Forwarded", trusted)
	if err != nil {
		return nil, err
	}
	o, err := newOptions("Forwarded", opts)
	if err != nil {
		return nil, err
	}
	return behindTrusted(o, ts, "Forwarded", func(r *http.Request) (netip.Addr, bool) {
		hops, cut := forwardedChain(r.Header.Values("Forwarded"))
		return walkTrusted(hops, cut, ts)
	}), nil
}

// forwardedChain returns the "for=" address of the rightmost elements of
// the Forwarded lines, at most [MaxHops] of them, oldest first
// ([lastElements]); an element without a usable address is the zero
// netip.Addr. cut reports whether elements left of them were not read.
func forwardedChain(lines []string) (hops []netip.Addr, cut bool) {
	elems, cut := lastElements(lines, MaxHops, true)
	hops = make([]netip.Addr, len(elems))
	for i, e := range elems {
		hops[i], _ = forwardedFor(e)
	}
	return hops, cut
}

// forwardedFor returns the address of the "for" parameter of one
// forwarded-element: pairs separated by ';', each token "=" value.
func forwardedFor(elem string) (netip.Addr, bool) {
	var node string
	seen := false
	for _, pair := range splitQuoted(elem, ';') {
		pair = strings.Trim(pair, " \t")
		if pair == "" {
			continue
		}
		name, raw, found := strings.Cut(pair, "=")
		if !found || !isToken(name, "") {
			return netip.Addr{}, false
		}
		value, ok := paramValue(raw)
		if !ok {
			return netip.Addr{}, false
		}
		if strings.EqualFold(name, "for") {
			if seen {
				return netip.Addr{}, false
			}
			node, seen = value, true
		}
	}
	if !seen || strings.EqualFold(node, "unknown") || isObfuscated(node) {
		return netip.Addr{}, false
	}
	return parseNode(node, true)
}

// paramValue returns a parameter value: a quoted-string, unquoted, or a
// token in which ':', '[' and ']' are tolerated.
func paramValue(raw string) (string, bool) {
	if strings.HasPrefix(raw, `"`) {
		return unquote(raw)
	}
	return raw, isToken(raw, ":[]")
}

// unquote decodes s, which must be exactly one quoted-string (RFC 9110).
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i == len(s)-1 || !isQuotedText(s[i]) {
				return "", false
			}
			b.WriteByte(s[i])
		case c == '"' || !isQuotedText(c):
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// splitQuoted splits s at every sep outside a quoted-string. An
// unterminated quoted-string runs to the end of s, into the last part, where
// parsing that part fails.
func splitQuoted(s string, sep byte) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// isToken reports whether s is a non-empty RFC 9110 token, also allowing
// the bytes in extra.
func isToken(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) && !strings.ContainsRune(extra, rune(c)) {
			return false
		}
	}
	return true
}

// isQuotedText reports whether c may appear in a quoted-string, literally
// or after a backslash: HTAB, SP, visible ASCII and obs-text.
func isQuotedText(c byte) bool {
	return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7f)
}
