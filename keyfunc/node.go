package keyfunc

import (
	"net/netip"
	"strings"
)

// parseNode parses one address as proxies write it into a header:
//
//	192.0.2.7            2001:db8::7          [2001:db8::7]
//	192.0.2.7:8080       [2001:db8::7]:8080
//
// With obfPort, a port may also be an RFC 7239 obfuscated port ("_a1").
// The result is cleaned (unmapped, no zone). ok is false for anything else,
// including RFC 7239 "unknown" and obfuscated node names.
func parseNode(s string, obfPort bool) (netip.Addr, bool) {
	if strings.HasPrefix(s, "[") {
		return parseBracketed(s, obfPort)
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return clean(a), true
	}
	// IPv4 with a port. A bare IPv6 address never gets here: it either
	// parsed above or is not an address.
	host, port, found := strings.Cut(s, ":")
	if !found || !validPort(port, obfPort) {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Is4() {
		return netip.Addr{}, false
	}
	return a, true
}

// parseBracketed parses "[v6]" or "[v6]:port".
func parseBracketed(s string, obfPort bool) (netip.Addr, bool) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return netip.Addr{}, false
	}
	if rest := s[end+1:]; rest != "" {
		port, found := strings.CutPrefix(rest, ":")
		if !found || !validPort(port, obfPort) {
			return netip.Addr{}, false
		}
	}
	a, err := netip.ParseAddr(s[1:end])
	if err != nil || !a.Is6() {
		return netip.Addr{}, false
	}
	return clean(a), true
}

// validPort reports whether s is a port: 1 to 5 digits up to 65535, or, with
// obf, an RFC 7239 obfuscated port ("_" followed by ALPHA, DIGIT, ".", "_",
// "-").
func validPort(s string, obf bool) bool {
	if obf && strings.HasPrefix(s, "_") {
		return isObfuscated(s)
	}
	if s == "" || len(s) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n <= 65535
}

// isObfuscated reports whether s is an RFC 7239 obfuscated identifier.
func isObfuscated(s string) bool {
	if len(s) < 2 || s[0] != '_' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
