package keyfunc

import (
	"fmt"
	"net/netip"
)

// Default prefix lengths for grouping addresses: one key per IPv4 address,
// one key per IPv6 /64 (the smallest allocation a site normally gets, so a
// client rotating addresses inside it stays one client).
const (
	DefaultIPv4Prefix = 32
	DefaultIPv6Prefix = 64
)

// An Option configures how an address-based [Func] ([PeerIP],
// [XForwardedFor], ...) turns the client address into a key.
type Option func(*options)

type options struct {
	v4Bits int
	v6Bits int
}

// WithIPv4Prefix groups IPv4 clients by their first bits bits (1 to 32;
// default [DefaultIPv4Prefix]). WithIPv4Prefix(24) keys 203.0.113.7 as
// "203.0.113.0/24".
func WithIPv4Prefix(bits int) Option {
	return func(o *options) { o.v4Bits = bits }
}

// WithIPv6Prefix groups IPv6 clients by their first bits bits (1 to 128;
// default [DefaultIPv6Prefix]). WithIPv6Prefix(128) keys every address on
// its own, which lets a client with a /64 use 2^64 keys.
func WithIPv6Prefix(bits int) Option {
	return func(o *options) { o.v6Bits = bits }
}

// newOptions applies opts over the defaults and validates the result.
func newOptions(name string, opts []Option) (options, error) {
	o := options{v4Bits: DefaultIPv4Prefix, v6Bits: DefaultIPv6Prefix}
	for _, opt := range opts {
		opt(&o)
	}
	if o.v4Bits < 1 || o.v4Bits > 32 {
		return o, fmt.Errorf("ratelimit: keyfunc: %s: IPv4 prefix %d not in [1, 32]", name, o.v4Bits)
	}
	if o.v6Bits < 1 || o.v6Bits > 128 {
		return o, fmt.Errorf("ratelimit: keyfunc: %s: IPv6 prefix %d not in [1, 128]", name, o.v6Bits)
	}
	return o, nil
}

// key returns the identity of address a: the address itself when the
// prefix is its full length ("203.0.113.7"), else the masked prefix
// ("2001:db8:1:2::/64"). a must be valid, unmapped and without zone.
func (o options) key(a netip.Addr) string {
	bits := o.v6Bits
	if a.Is4() {
		bits = o.v4Bits
	}
	if bits == a.BitLen() {
		return a.String()
	}
	p, _ := a.Prefix(bits) // bits is in range for a's family: no error.
	return p.String()
}

// clean returns a in the form keys and trust checks use: IPv4-mapped IPv6
// unmapped and the zone dropped, so no alias of an address ("::ffff:10.0.0.1",
// "fe80::1%eth0") escapes a trusted prefix or gets a key of its own.
func clean(a netip.Addr) netip.Addr {
	return a.Unmap().WithZone("")
}
