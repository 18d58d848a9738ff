package recipes_test

import (
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"

	"github.com/ratelimitkit/ratelimit/examples/recipes"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// from returns a request from the peer remote with header lines given as
// "Name: value".
func from(remote string, lines ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	for _, l := range lines {
		name, value, _ := strings.Cut(l, ": ")
		r.Header.Add(name, value)
	}
	return r
}

// show prints the identity ip gives r.
func show(ip keyfunc.Func, r *http.Request) {
	id, err := ip(r)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(id)
}

var (
	lbSubnet  = netip.MustParsePrefix("10.0.0.0/16")
	cdnRanges = []netip.Prefix{netip.MustParsePrefix("173.245.48.0/20"), netip.MustParsePrefix("2400:cb00::/32")}
	cdnAndLB  = append([]netip.Prefix{lbSubnet}, cdnRanges...)
)

func mustClient(p recipes.Proxies) keyfunc.Func { return keyfunc.Must(recipes.ClientIP(p)) }

// logToStdout sends slog's default logger to stdout, without the time and
// the message, so an example's output shows that a warning was logged; the
// function it returns restores slog's and the log package's settings.
func logToStdout() (restore func()) {
	old, out, flags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.MessageKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	return func() {
		slog.SetDefault(old) // slog.SetDefault redirects the log package too
		log.SetOutput(out)
		log.SetFlags(flags)
	}
}

// One load balancer in 10.0.0.0/16 appends the client's address to
// X-Forwarded-For. What a client writes into the header itself is left of
// that address and never read.
func ExampleClientIP() {
	ip := mustClient(recipes.Proxies{Trusted: []netip.Prefix{lbSubnet}})
	show(ip, from("10.0.3.4:5000", "X-Forwarded-For: 203.0.113.7"))
	show(ip, from("10.0.3.4:5000", "X-Forwarded-For: 6.6.6.6, 203.0.113.7")) // 6.6.6.6 forged
	show(ip, from("10.0.3.4:5000"))                                          // the balancer's own health check
	// Output:
	// 203.0.113.7
	// 203.0.113.7
	// 10.0.3.4
}

// A CDN in front of the load balancer: list both layers. With the CDN
// missing, every client of an edge would share the edge's address.
func ExampleClientIP_cdnAndLoadBalancer() {
	both := mustClient(recipes.Proxies{Trusted: cdnAndLB})
	lbOnly := mustClient(recipes.Proxies{Trusted: []netip.Prefix{lbSubnet}})
	r := from("10.0.3.4:5000", "X-Forwarded-For: 6.6.6.6, 203.0.113.7, 173.245.48.9")
	show(both, r)
	show(lbOnly, r)
	// Output:
	// 203.0.113.7
	// 173.245.48.9
}

// One proxy of unknown address: the last entry is the client, whoever the
// peer is. Safe only if nothing reaches the server but that proxy: a
// client connecting directly chooses its identity.
func ExampleClientIP_hops() {
	ip := mustClient(recipes.Proxies{Hops: 1})
	show(ip, from("10.0.3.4:5000", "X-Forwarded-For: 6.6.6.6, 203.0.113.7"))
	show(ip, from("198.51.100.9:5000", "X-Forwarded-For: 6.6.6.6")) // bypassed the proxy: trusted anyway
	// Output:
	// 203.0.113.7
	// 6.6.6.6
}

// A CDN that overwrites CF-Connecting-IP on every request, connecting to
// the server from its published ranges; from any other peer the header is
// not read.
func ExampleClientIP_cloudflare() {
	ip := mustClient(recipes.Proxies{Header: "CF-Connecting-IP", Trusted: cdnRanges})
	show(ip, from("173.245.48.9:443", "CF-Connecting-IP: 203.0.113.7"))
	show(ip, from("[2400:cb00::9]:443", "CF-Connecting-IP: 2001:db8:1:2::7"))
	show(ip, from("198.51.100.9:443", "CF-Connecting-IP: 6.6.6.6"))
	// Output:
	// 203.0.113.7
	// 2001:db8:1:2::/64
	// 198.51.100.9
}

// A client that reaches the server directly and sends X-Forwarded-For is
// keyed by its own address, whatever the header says. Each key function
// warns once, on slog's default logger, that a proxy header came from an
// untrusted peer: a spoofing client, or a proxy missing from Trusted (then
// named, as private peers are).
func ExampleClientIP_spoofed() {
	defer logToStdout()()

	behindLB := mustClient(recipes.Proxies{Trusted: []netip.Prefix{lbSubnet}})
	show(behindLB, from("198.51.100.9:5000", "X-Forwarded-For: 203.0.113.7")) // connected directly
	show(behindLB, from("198.51.100.9:5000", "X-Forwarded-For: 10.0.0.1"))    // a trusted-looking forgery

	behindNewProxy := mustClient(recipes.Proxies{Trusted: []netip.Prefix{lbSubnet}}) // 192.168.1.5 is not listed
	show(behindNewProxy, from("192.168.1.5:5000", "X-Forwarded-For: 203.0.113.7"))
	show(behindNewProxy, from("192.168.1.5:5000", "X-Forwarded-For: 198.51.100.23"))
	// Output:
	// level=WARN header=X-Forwarded-For
	// 198.51.100.9
	// 198.51.100.9
	// level=WARN header=X-Forwarded-For peer=192.168.1.5
	// 192.168.1.5
	// 192.168.1.5
}
