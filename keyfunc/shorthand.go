package keyfunc

// The constructors above return an error because their arguments can be
// wrong (a header name or trusted prefixes read from configuration). The
// shorthands below are for the common cases written as constants in code,
// as httprate.KeyByIP is: they cannot fail at request time, and a constant
// that is wrong is a programming error, reported by a panic at start-up,
// as regexp.MustCompile does.

// ByIP keys by the address of the TCP peer: [PeerIP] with the default
// prefixes (each IPv4 address alone, IPv6 by /64). It is the right key when
// clients connect directly; behind a proxy, see [XForwardedFor].
func ByIP() Func {
	return Must(PeerIP())
}

// ByHeader keys by the value of the header name, hashed: [Header] for a
// name written in code. It panics if name is not a header name; use Header
// for a name read from configuration.
func ByHeader(name string) Func {
	return Must(Header(name))
}

// ByAPIKeyOrIP keys by the API key in the header name, hashed, and by the
// peer address when the request has none: FirstOf(ByHeader(name), ByIP()),
// the usual key of an API that serves both its customers and anonymous
// callers. The key is not checked: an invented key is a quota of its own
// unless the application rejects unknown keys before the limiter, or the
// limiter resolves keys to tiers (core.WithTierKeyIdentity). It panics if
// name is not a header name.
func ByAPIKeyOrIP(name string) Func {
	return FirstOf(ByHeader(name), ByIP())
}
