package keyfunc_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// request returns a request from remote with header lines given as
// "Name: value".
func request(remote string, lines ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	for _, l := range lines {
		name, value, _ := strings.Cut(l, ": ")
		r.Header.Add(name, value)
	}
	return r
}

func show(f keyfunc.Func, r *http.Request) {
	id, err := f(r)
	fmt.Printf("%q %v\n", id, err)
}

// Behind one load balancer in 10.0.0.0/8 that appends the client address to
// X-Forwarded-For. Whatever a client writes into the header itself is never
// read, and a client that bypasses the load balancer is keyed by its own
// address.
func ExampleXForwardedFor() {
	key, err := keyfunc.XForwardedFor([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	if err != nil {
		panic(err)
	}
	show(key, request("10.0.0.5:3000", "X-Forwarded-For: 203.0.113.7"))
	show(key, request("10.0.0.5:3000", "X-Forwarded-For: 6.6.6.6, 203.0.113.7")) // 6.6.6.6 was forged
	show(key, request("10.0.0.5:3000", "X-Forwarded-For: 2001:db8:1:2::99"))
	show(key, request("198.51.100.9:3000", "X-Forwarded-For: 6.6.6.6")) // no load balancer
	// Output:
	// "203.0.113.7" <nil>
	// "203.0.113.7" <nil>
	// "2001:db8:1:2::/64" <nil>
	// "198.51.100.9" <nil>
}

// Behind a CDN that overwrites CF-Connecting-IP, accepted only from the
// CDN's published ranges.
func ExampleTrustedHeader() {
	key := keyfunc.Must(keyfunc.TrustedHeader("CF-Connecting-IP", []netip.Prefix{
		netip.MustParsePrefix("173.245.48.0/20"),
		netip.MustParsePrefix("2400:cb00::/32"),
	}))
	show(key, request("173.245.48.1:443", "CF-Connecting-IP: 203.0.113.7"))
	show(key, request("198.51.100.9:443", "CF-Connecting-IP: 203.0.113.7"))
	// Output:
	// "203.0.113.7" <nil>
	// "198.51.100.9" <nil>
}

// IPv6 clients are grouped by /64 unless configured otherwise.
func ExamplePeerIP() {
	key := keyfunc.Must(keyfunc.PeerIP())
	show(key, request("[2001:db8:1:2::1]:5000"))
	show(key, request("[2001:db8:1:2:ffff::2]:5000"))
	show(key, request("[::ffff:203.0.113.7]:5000"))

	wide := keyfunc.Must(keyfunc.PeerIP(keyfunc.WithIPv6Prefix(48), keyfunc.WithIPv4Prefix(24)))
	show(wide, request("[2001:db8:1:2::1]:5000"))
	show(wide, request("203.0.113.7:5000"))
	// Output:
	// "2001:db8:1:2::/64" <nil>
	// "2001:db8:1:2::/64" <nil>
	// "203.0.113.7" <nil>
	// "2001:db8:1::/48" <nil>
	// "203.0.113.0/24" <nil>
}

// An API key together with the address: one quota per key and address, so
// a leaked key used from many places does not drain the owner's quota, and
// the key itself is stored only as a hash.
func ExampleComposite() {
	key := keyfunc.Composite(keyfunc.Must(keyfunc.Header("X-API-Key")), keyfunc.Must(keyfunc.PeerIP()))
	show(key, request("203.0.113.7:5000", "X-API-Key: secret-key-123"))
	// Output:
	// "26:key:3If5To9EtQGOVKWI7r6q5g|11:203.0.113.7" <nil>
}

// The API key when the request has one, else the address.
func ExampleFirstOf() {
	key := keyfunc.FirstOf(keyfunc.Must(keyfunc.Header("X-API-Key")), keyfunc.Must(keyfunc.PeerIP()))
	show(key, request("203.0.113.7:5000", "X-API-Key: secret-key-123"))
	show(key, request("203.0.113.7:5000"))
	// Output:
	// "key:3If5To9EtQGOVKWI7r6q5g" <nil>
	// "203.0.113.7" <nil>
}

// "5 login attempts per minute per account and address": the account name
// is read from the form without taking the body from the login handler.
func ExampleFormValue() {
	key := keyfunc.Composite(keyfunc.Must(keyfunc.FormValue("username")), keyfunc.Must(keyfunc.PeerIP()))

	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("username=Alice&password=hunter2"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = "203.0.113.7:5000"
	show(key, r)

	// The login handler still reads the whole form.
	fmt.Println(r.PostFormValue("username"), r.PostFormValue("password"))
	// Output:
	// "27:form:O-9JdTx6DEZNiJkOkmMiRg|11:203.0.113.7" <nil>
	// Alice hunter2
}

// An application whose login ignores the width of letters, as NFKC does
// (with golang.org/x/text, normalize would be norm.NFKC.String), keys the
// full-width spelling as the same account; FormValue would not.
func ExampleFormValueFunc() {
	fullWidth := func(s string) string {
		return strings.Map(func(c rune) rune {
			if c >= 0xff01 && c <= 0xff5e { // Full-width "!" to "~".
				return c - 0xff01 + '!'
			}
			return c
		}, s)
	}
	plain := keyfunc.Must(keyfunc.FormValue("username"))
	folded := keyfunc.Must(keyfunc.FormValueFunc("username", fullWidth))

	for _, name := range []string{"alice", "ａｌｉｃｅ"} {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(`{"username":"`+name+`"}`))
		r.Header.Set("Content-Type", "application/json")
		show(plain, r)
		show(folded, r)
	}
	// Output:
	// "form:O-9JdTx6DEZNiJkOkmMiRg" <nil>
	// "form:O-9JdTx6DEZNiJkOkmMiRg" <nil>
	// "form:5oNs1xYLxdL7ZyY18HTGqQ" <nil>
	// "form:O-9JdTx6DEZNiJkOkmMiRg" <nil>
}
