package keyfunc

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
)

// proxies are the trusted proxy prefixes of the tests: a private IPv4
// network and a unique-local IPv6 one.
var proxies = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("fd00::/8"),
}

// hdr is one header line.
type hdr struct{ name, value string }

// newRequest returns a GET request from remote carrying the header lines in
// order; repeated names become repeated lines.
func newRequest(remote string, lines ...hdr) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	for _, l := range lines {
		r.Header.Add(l.name, l.value)
	}
	return r
}

func xff(v string) hdr       { return hdr{"X-Forwarded-For", v} }
func forwarded(v string) hdr { return hdr{"Forwarded", v} }
