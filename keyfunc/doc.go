// Package keyfunc answers "who is the client?" for a rate limiter: each
// constructor returns a [Func], a plain func(*http.Request) (string, error)
// whose result is the client identity a limit is counted against.
//
// # Addresses
//
// [PeerIP] keys by the address of the TCP peer (r.RemoteAddr). It cannot be
// spoofed and is the right choice when clients connect directly. Behind
// proxies, pick the one constructor that matches the deployment:
//
//   - [XForwardedFor]: proxies whose addresses you can list append to
//     X-Forwarded-For; the header is walked right to left past trusted hops.
//   - [XForwardedForHops]: exactly n proxies with unknown addresses.
//   - [Forwarded]: the same walk over the RFC 7239 Forwarded header.
//   - [XRealIP] and [TrustedHeader]: a proxy or CDN that overwrites a
//     single-address header (X-Real-IP, CF-Connecting-IP, Fly-Client-IP).
//
// A proxy header is read only when the peer is a trusted proxy, and a list
// header only from its right end, at most [MaxHops] entries within the last
// [MaxHeaderBytes] bytes: padding a client puts on the left is never read.
// Whatever the entries that decide hold — nothing, garbage, an obfuscated
// identifier, an entry cut by those limits — the answer falls back to the
// peer address, never to a value the client chose.
//
// A proxy missing from the trust model makes every client share the
// proxy's quota. The address Funcs warn once per cause on slog's default
// logger when they see its marks: [PeerIP] when requests carry
// X-Forwarded-For or Forwarded or mostly come from a few private
// addresses, the trusted-proxy constructors when their header arrives from
// a peer they do not trust.
//
// Every address is normalised: IPv4-mapped IPv6 is unmapped, zones are
// dropped, and IPv6 addresses are grouped by their /64 (see
// [WithIPv6Prefix], [WithIPv4Prefix]), so "2001:db8:1:2::7" and
// "2001:db8:1:2::8" are both "2001:db8:1:2::/64".
//
// # Secrets and users
//
// [Header] and [BearerToken] key by an API key or token, hashed with SHA-256
// so the raw secret never becomes part of a store key. [ContextValue] keys by
// a user id that authentication middleware put in the request context.
// [FormValue] keys by a login form field (the account name) without
// consuming the body, reading a JSON body as encoding/json does;
// [FormValueFunc] adds the application's normalisation of the name. They
// return an error wrapping [ErrNoKey] when the request carries no such
// value.
//
// # Combining
//
// [Composite] joins several parts into one unambiguous identity
// ("account + IP"); [FirstOf] takes the first part that is present
// ("API key, else IP"). [Method] is a part for separate read and write
// quotas. docs/client-identity.md explains which trust model
// is safe where, and why limiting by address alone punishes users behind NAT.
//
// # Shorthands
//
// [ByIP], [ByHeader] and [ByAPIKeyOrIP] are the common cases written as
// constants in code, as chi's httprate.KeyByIP is: they return a Func, not an
// error, and panic at start-up on a header name that is not one:
//
//	httplimit.WithKey(keyfunc.ByAPIKeyOrIP("X-API-Key"))
package keyfunc
