package keyfunc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddressFuncs is the spoofing table: every address-based Func against
// forged, chained, repeated, malformed and oversized headers.
func TestAddressFuncs(t *testing.T) {
	peer := Must(PeerIP())
	xffTrusted := Must(XForwardedFor(proxies))
	hops1 := Must(XForwardedForHops(1))
	hops2 := Must(XForwardedForHops(2))
	fwd := Must(Forwarded(proxies))
	realIP := Must(XRealIP(proxies))
	cf := Must(TrustedHeader("cf-connecting-ip", proxies))

	const (
		lb       = "10.0.0.1:4000" // a trusted load balancer
		attacker = "203.0.113.66:5000"
	)
	many := func(n int) string { return strings.Repeat("198.51.100.1, ", n-1) + "203.0.113.7" }

	tests := []struct {
		name   string
		fn     Func
		remote string
		lines  []hdr
		want   string
	}{
		// PeerIP ignores every header.
		{"PeerIP: direct client", peer, "203.0.113.7:1234", nil, "203.0.113.7"},
		{"PeerIP: forged X-Forwarded-For is ignored", peer, attacker, []hdr{xff("1.1.1.1")}, "203.0.113.66"},
		{"PeerIP: bare RemoteAddr", peer, "203.0.113.7", nil, "203.0.113.7"},
		{"PeerIP: IPv4-mapped peer is unmapped", peer, "[::ffff:203.0.113.7]:1234", nil, "203.0.113.7"},
		{"PeerIP: IPv6 peer is grouped by /64", peer, "[2001:db8:1:2:3:4:5:6]:1234", nil, "2001:db8:1:2::/64"},
		{"PeerIP: zone is dropped", peer, "[fe80::1%eth0]:1234", nil, "fe80::/64"},

		// XForwardedFor: the peer decides whether the header is read at all.
		{"XFF: untrusted peer without header", xffTrusted, attacker, nil, "203.0.113.66"},
		{"XFF: forged header from untrusted peer", xffTrusted, attacker, []hdr{xff("1.1.1.1")}, "203.0.113.66"},
		{"XFF: forged trusted address from untrusted peer", xffTrusted, attacker, []hdr{xff("10.0.0.9")}, "203.0.113.66"},
		{"XFF: trusted peer without header is the client", xffTrusted, lb, nil, "10.0.0.1"},
		{"XFF: one load balancer", xffTrusted, lb, []hdr{xff("203.0.113.7")}, "203.0.113.7"},
		{"XFF: forged entry left of the real client", xffTrusted, lb, []hdr{xff("6.6.6.6, 203.0.113.7")}, "203.0.113.7"},
		{"XFF: forged trusted entry left of the client", xffTrusted, lb, []hdr{xff("10.0.0.9, 203.0.113.7")}, "203.0.113.7"},
		{"XFF: forged chain through trusted proxies", xffTrusted, lb, []hdr{xff("6.6.6.6, 10.0.0.3, 203.0.113.7, 10.0.0.2")}, "203.0.113.7"},
		{"XFF: two trusted proxies", xffTrusted, lb, []hdr{xff("203.0.113.7, 10.0.0.2")}, "203.0.113.7"},
		{"XFF: every hop trusted, leftmost is the client", xffTrusted, lb, []hdr{xff("10.0.0.7, 10.0.0.2")}, "10.0.0.7"},
		{"XFF: lines are merged in order", xffTrusted, lb, []hdr{xff("6.6.6.6"), xff("203.0.113.7")}, "203.0.113.7"},
		{"XFF: last line holds the trusted hop", xffTrusted, lb, []hdr{xff("6.6.6.6, 203.0.113.7"), xff("10.0.0.2")}, "203.0.113.7"},
		{"XFF: the first line alone is not the answer", xffTrusted, lb, []hdr{xff("203.0.113.7"), xff("198.51.100.1")}, "198.51.100.1"},
		{"XFF: spaces and tabs around entries", xffTrusted, lb, []hdr{xff(" 203.0.113.7 ,\t10.0.0.2 ")}, "203.0.113.7"},
		{"XFF: IPv4 with port", xffTrusted, lb, []hdr{xff("203.0.113.7:5100")}, "203.0.113.7"},
		{"XFF: bracketed IPv6 with port", xffTrusted, lb, []hdr{xff("[2001:db8:1:2::7]:5100")}, "2001:db8:1:2::/64"},
		{"XFF: IPv6 client grouped by /64", xffTrusted, lb, []hdr{xff("2001:db8:1:2:aaaa::1")}, "2001:db8:1:2::/64"},
		{"XFF: IPv6 rotation inside the /64 is the same client", xffTrusted, lb, []hdr{xff("2001:db8:1:2:bbbb:cccc:dddd:2")}, "2001:db8:1:2::/64"},
		{"XFF: next /64 is another client", xffTrusted, lb, []hdr{xff("2001:db8:1:3::1")}, "2001:db8:1:3::/64"},
		{"XFF: IPv4-mapped client is unmapped", xffTrusted, lb, []hdr{xff("::ffff:203.0.113.7")}, "203.0.113.7"},
		{"XFF: IPv4-mapped alias of a trusted proxy is trusted", xffTrusted, lb, []hdr{xff("203.0.113.7, ::ffff:10.0.0.2")}, "203.0.113.7"},
		{"XFF: zoned alias of a trusted proxy is trusted", xffTrusted, lb, []hdr{xff("203.0.113.7, fd00::2%eth0")}, "203.0.113.7"},
		{"XFF: zone of the client is dropped", xffTrusted, lb, []hdr{xff("fe80::1%eth0")}, "fe80::/64"},
		{"XFF: IPv4-mapped trusted peer", xffTrusted, "[::ffff:10.0.0.1]:4000", []hdr{xff("203.0.113.7")}, "203.0.113.7"},
		{"XFF: trusted IPv6 peer", xffTrusted, "[fd00::1]:4000", []hdr{xff("203.0.113.7")}, "203.0.113.7"},
		{"XFF: bare trusted peer", xffTrusted, "10.0.0.1", []hdr{xff("203.0.113.7")}, "203.0.113.7"},
		{"XFF: garbage at the right falls back to peer", xffTrusted, lb, []hdr{xff("203.0.113.7, garbage")}, "10.0.0.1"},
		{"XFF: garbage left of the client is never read", xffTrusted, lb, []hdr{xff("garbage, 203.0.113.7")}, "203.0.113.7"},
		{"XFF: empty header falls back to peer", xffTrusted, lb, []hdr{xff("")}, "10.0.0.1"},
		{"XFF: trailing comma falls back to peer", xffTrusted, lb, []hdr{xff("203.0.113.7,")}, "10.0.0.1"},
		{"XFF: unknown falls back to peer", xffTrusted, lb, []hdr{xff("unknown")}, "10.0.0.1"},
		{"XFF: leading zeros are not an address", xffTrusted, lb, []hdr{xff("203.000.113.7")}, "10.0.0.1"},
		{"XFF: bracketed IPv4 is not an address", xffTrusted, lb, []hdr{xff("[203.0.113.7]")}, "10.0.0.1"},
		{"XFF: port out of range", xffTrusted, lb, []hdr{xff("203.0.113.7:65536")}, "10.0.0.1"},
		{"XFF: hostname is not an address", xffTrusted, lb, []hdr{xff("example.com")}, "10.0.0.1"},
		{"XFF: MaxHops entries are read", xffTrusted, lb, []hdr{xff(many(MaxHops))}, "203.0.113.7"},
		{"XFF: padding beyond MaxHops entries is never read", xffTrusted, lb, []hdr{xff(many(MaxHops + 1))}, "203.0.113.7"},
		{"XFF: padding beyond MaxHops entries over several lines", xffTrusted, lb, []hdr{xff(many(MaxHops)), xff("203.0.113.8")}, "203.0.113.8"},
		{"XFF: padding of a thousand entries is never read", xffTrusted, lb, []hdr{xff(many(1000))}, "203.0.113.7"},
		{"XFF: padding of trusted entries is never read", xffTrusted, lb, []hdr{xff(strings.Repeat("10.0.0.9, ", 1000) + "203.0.113.7")}, "203.0.113.7"},
		{"XFF: padding beyond MaxHeaderBytes is never read", xffTrusted, lb, []hdr{xff(strings.Repeat(" ", MaxHeaderBytes) + ", 203.0.113.7")}, "203.0.113.7"},
		{"XFF: a padding line beyond MaxHeaderBytes is never read", xffTrusted, lb, []hdr{xff(strings.Repeat("6", 100<<10)), xff("203.0.113.7, 10.0.0.2")}, "203.0.113.7"},
		{"XFF: MaxHops trusted entries, leftmost is the client", xffTrusted, lb, []hdr{xff(strings.Repeat("10.0.0.9, ", MaxHops-1) + "10.0.0.7")}, "10.0.0.9"},
		{"XFF: more than MaxHops trusted entries falls back to peer", xffTrusted, lb, []hdr{xff(strings.Repeat("10.0.0.9, ", MaxHops) + "10.0.0.7")}, "10.0.0.1"},
		{"XFF: an entry cut by MaxHeaderBytes falls back to peer", xffTrusted, lb, []hdr{xff(strings.Repeat(" ", MaxHeaderBytes) + "203.0.113.7")}, "10.0.0.1"},
		{"XFF: trusted entries up to a cut entry fall back to peer", xffTrusted, lb, []hdr{xff(strings.Repeat(" ", MaxHeaderBytes-20) + "203.0.113.7, 10.0.0.2")}, "10.0.0.1"},

		// XForwardedForHops: the position decides, the peer is not checked.
		{"Hops(1): the last entry", hops1, lb, []hdr{xff("6.6.6.6, 203.0.113.7")}, "203.0.113.7"},
		{"Hops(1): lines merged in order", hops1, lb, []hdr{xff("6.6.6.6"), xff("203.0.113.7")}, "203.0.113.7"},
		{"Hops(2): second entry from the right", hops2, lb, []hdr{xff("6.6.6.6, 203.0.113.7, 10.0.0.2")}, "203.0.113.7"},
		{"Hops(2): IPv6 grouped", hops2, lb, []hdr{xff("2001:db8:1:2::99, 10.0.0.2")}, "2001:db8:1:2::/64"},
		{"Hops(1): no header falls back to peer", hops1, lb, nil, "10.0.0.1"},
		{"Hops(2): too few entries falls back to peer", hops2, lb, []hdr{xff("203.0.113.7")}, "10.0.0.1"},
		{"Hops(1): garbage falls back to peer", hops1, lb, []hdr{xff("203.0.113.7, nonsense")}, "10.0.0.1"},
		{"Hops(2): garbage right of the client falls back to peer", hops2, lb, []hdr{xff("203.0.113.7, nonsense")}, "10.0.0.1"},
		{"Hops(2): garbage left of the client is never read", hops2, lb, []hdr{xff("nonsense, 203.0.113.7, 10.0.0.2")}, "203.0.113.7"},
		{"Hops(1): padding beyond MaxHops entries is never read", hops1, lb, []hdr{xff(many(MaxHops + 1))}, "203.0.113.7"},
		{"Hops(2): padding beyond MaxHeaderBytes is never read", hops2, lb, []hdr{xff(strings.Repeat("6.6.6.6,", MaxHeaderBytes) + "203.0.113.7, 10.0.0.2")}, "203.0.113.7"},
		{"Hops(2): client entry cut by MaxHeaderBytes falls back to peer", hops2, lb, []hdr{xff(strings.Repeat(" ", MaxHeaderBytes) + "203.0.113.7, 10.0.0.2")}, "10.0.0.1"},

		// Forwarded (RFC 7239).
		{"Forwarded: untrusted peer", fwd, attacker, []hdr{forwarded("for=1.1.1.1")}, "203.0.113.66"},
		{"Forwarded: one proxy", fwd, lb, []hdr{forwarded("for=203.0.113.7")}, "203.0.113.7"},
		{"Forwarded: parameter names are case-insensitive", fwd, lb, []hdr{forwarded("For=203.0.113.7;Proto=https;BY=10.0.0.1")}, "203.0.113.7"},
		{"Forwarded: spaces around ; are tolerated", fwd, lb, []hdr{forwarded("for=203.0.113.7 ; proto=http")}, "203.0.113.7"},
		{"Forwarded: quoted IPv6 with port", fwd, lb, []hdr{forwarded(`for="[2001:db8:cafe::17]:4711"`)}, "2001:db8:cafe::/64"},
		{"Forwarded: quoted IPv4 with port", fwd, lb, []hdr{forwarded(`for="203.0.113.7:47011"`)}, "203.0.113.7"},
		{"Forwarded: quoted IPv6 with obfuscated port", fwd, lb, []hdr{forwarded(`for="[2001:db8::7]:_p1"`)}, "2001:db8::/64"},
		{"Forwarded: unquoted bracketed IPv6 is tolerated", fwd, lb, []hdr{forwarded("for=[2001:db8::7]")}, "2001:db8::/64"},
		{"Forwarded: quoted-pair escapes", fwd, lb, []hdr{forwarded(`for="\[2001:db8::7\]"`)}, "2001:db8::/64"},
		{"Forwarded: IPv4-mapped is unmapped", fwd, lb, []hdr{forwarded(`for="[::ffff:203.0.113.7]"`)}, "203.0.113.7"},
		{"Forwarded: zone is dropped", fwd, lb, []hdr{forwarded(`for="[fe80::1%25eth0]"`)}, "fe80::/64"},
		{"Forwarded: forged element left of the client", fwd, lb, []hdr{forwarded("for=6.6.6.6, for=203.0.113.7")}, "203.0.113.7"},
		{"Forwarded: trusted hops are skipped", fwd, lb, []hdr{forwarded(`for=6.6.6.6, for=203.0.113.7, for="[fd00::2]"`)}, "203.0.113.7"},
		{"Forwarded: lines merged in order", fwd, lb, []hdr{forwarded("for=6.6.6.6"), forwarded("for=203.0.113.7")}, "203.0.113.7"},
		{"Forwarded: quoted comma does not split elements", fwd, lb, []hdr{forwarded(`for=203.0.113.7;ext="a, for=6.6.6.6"`)}, "203.0.113.7"},
		{"Forwarded: every hop trusted, leftmost is the client", fwd, lb, []hdr{forwarded("for=10.0.0.7, for=10.0.0.2")}, "10.0.0.7"},
		{"Forwarded: obfuscated client falls back to peer", fwd, lb, []hdr{forwarded("for=_hidden")}, "10.0.0.1"},
		{"Forwarded: unknown falls back to peer", fwd, lb, []hdr{forwarded("for=unknown")}, "10.0.0.1"},
		{"Forwarded: quoted unknown falls back to peer", fwd, lb, []hdr{forwarded(`for="UNKNOWN"`)}, "10.0.0.1"},
		{"Forwarded: obfuscated left of the client is never read", fwd, lb, []hdr{forwarded("for=_hidden, for=203.0.113.7")}, "203.0.113.7"},
		{"Forwarded: element without for falls back to peer", fwd, lb, []hdr{forwarded("proto=https")}, "10.0.0.1"},
		{"Forwarded: for twice falls back to peer", fwd, lb, []hdr{forwarded("for=6.6.6.6;for=203.0.113.7")}, "10.0.0.1"},
		{"Forwarded: empty value falls back to peer", fwd, lb, []hdr{forwarded("for=")}, "10.0.0.1"},
		{"Forwarded: space around = falls back to peer", fwd, lb, []hdr{forwarded("for = 203.0.113.7")}, "10.0.0.1"},
		{"Forwarded: unbracketed IPv6 with port falls back to peer", fwd, lb, []hdr{forwarded(`for="2001:db8::7:4711x"`)}, "10.0.0.1"},
		{"Forwarded: unterminated quote cannot swallow an appended element", fwd, lb, []hdr{forwarded(`for="6.6.6.6, for=203.0.113.7`)}, "203.0.113.7"},
		{"Forwarded: stray quote left of the client is never read", fwd, lb, []hdr{forwarded(`for=6.6.6.6";x=", for=203.0.113.7;proto=https`)}, "203.0.113.7"},
		{"Forwarded: quoted escapes are read from the right", fwd, lb, []hdr{forwarded(`for=6.6.6.6;ext="\", for=\"", for="\[2001:db8::7\]"`)}, "2001:db8::/64"},
		{"Forwarded: unterminated quote stays in its line", fwd, lb, []hdr{forwarded(`for="6.6.6.6`), forwarded("for=203.0.113.7")}, "203.0.113.7"},
		{"Forwarded: control byte in quoted-string", fwd, lb, []hdr{forwarded("for=\"203.0.113.7\x01\"")}, "10.0.0.1"},
		{"Forwarded: X-Forwarded-For is not read", fwd, lb, []hdr{xff("203.0.113.7")}, "10.0.0.1"},
		{"Forwarded: padding beyond MaxHops elements is never read", fwd, lb, []hdr{forwarded(strings.Repeat("for=1.1.1.1,", MaxHops) + "for=203.0.113.7")}, "203.0.113.7"},
		{"Forwarded: padding beyond MaxHeaderBytes is never read", fwd, lb, []hdr{forwarded(strings.Repeat(`for="6.6.6.6, `, MaxHeaderBytes)), forwarded(`for="[2001:db8::7]:4711", for=10.0.0.2`)}, "2001:db8::/64"},
		{"Forwarded: more than MaxHops trusted elements falls back to peer", fwd, lb, []hdr{forwarded(strings.Repeat("for=10.0.0.9,", MaxHops) + "for=10.0.0.7")}, "10.0.0.1"},
		{"Forwarded: an element cut by MaxHeaderBytes falls back to peer", fwd, lb, []hdr{forwarded(`for="` + strings.Repeat(" ", MaxHeaderBytes) + `203.0.113.7"`)}, "10.0.0.1"},

		// Single-address headers.
		{"XRealIP: trusted peer", realIP, lb, []hdr{{"X-Real-IP", "203.0.113.7"}}, "203.0.113.7"},
		{"XRealIP: forged from untrusted peer", realIP, attacker, []hdr{{"X-Real-IP", "1.1.1.1"}}, "203.0.113.66"},
		{"XRealIP: missing falls back to peer", realIP, lb, nil, "10.0.0.1"},
		{"XRealIP: repeated lines fall back to peer", realIP, lb, []hdr{{"X-Real-IP", "6.6.6.6"}, {"X-Real-IP", "203.0.113.7"}}, "10.0.0.1"},
		{"XRealIP: a list falls back to peer", realIP, lb, []hdr{{"X-Real-IP", "6.6.6.6, 203.0.113.7"}}, "10.0.0.1"},
		{"XRealIP: garbage falls back to peer", realIP, lb, []hdr{{"X-Real-IP", "localhost"}}, "10.0.0.1"},
		{"XRealIP: bracketed IPv6", realIP, lb, []hdr{{"X-Real-IP", "[2001:db8:1:2::7]"}}, "2001:db8:1:2::/64"},
		{"XRealIP: oversized falls back to peer", realIP, lb, []hdr{{"X-Real-IP", strings.Repeat(" ", MaxHeaderBytes) + "203.0.113.7"}}, "10.0.0.1"},
		{"TrustedHeader: CDN header", cf, lb, []hdr{{"CF-Connecting-IP", "2001:db8:1:2::7"}}, "2001:db8:1:2::/64"},
		{"TrustedHeader: forged from untrusted peer", cf, attacker, []hdr{{"CF-Connecting-IP", "1.1.1.1"}}, "203.0.113.66"},
		{"TrustedHeader: other headers are not read", cf, lb, []hdr{{"X-Real-IP", "203.0.113.7"}}, "10.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(newRequest(tt.remote, tt.lines...))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPeerIPGrouping(t *testing.T) {
	tests := []struct {
		opts   []Option
		remote string
		want   string
	}{
		{nil, "203.0.113.7:1", "203.0.113.7"},
		{[]Option{WithIPv4Prefix(24)}, "203.0.113.7:1", "203.0.113.0/24"},
		{[]Option{WithIPv4Prefix(24)}, "[2001:db8:1:2::7]:1", "2001:db8:1:2::/64"},
		{[]Option{WithIPv6Prefix(48)}, "[2001:db8:1:2::7]:1", "2001:db8:1::/48"},
		{[]Option{WithIPv6Prefix(128)}, "[2001:db8:1:2::7]:1", "2001:db8:1:2::7"},
		{[]Option{WithIPv6Prefix(56)}, "[::ffff:203.0.113.7]:1", "203.0.113.7"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d options, peer %s", len(tt.opts), tt.remote), func(t *testing.T) {
			f, err := PeerIP(tt.opts...)
			require.NoError(t, err)
			got, err := f(newRequest(tt.remote))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNoPeerAddress(t *testing.T) {
	tests := []struct {
		name string
		fn   Func
	}{
		{"PeerIP", Must(PeerIP())},
		{"XForwardedFor", Must(XForwardedFor(proxies))},
		{"XForwardedForHops", Must(XForwardedForHops(1))},
		{"Forwarded", Must(Forwarded(proxies))},
		{"XRealIP", Must(XRealIP(proxies))},
	}
	for _, tt := range tests {
		t.Run(tt.name+" from a Unix socket", func(t *testing.T) {
			_, err := tt.fn(newRequest("@", xff("203.0.113.7"), forwarded("for=203.0.113.7")))
			assert.ErrorIs(t, err, ErrNoKey)
		})
	}
}
