package keyfunc

import (
	"strings"
	"testing"
)

func BenchmarkFuncs(b *testing.B) {
	benchmarks := []struct {
		name string
		fn   Func
		line hdr
	}{
		{"PeerIP", Must(PeerIP()), hdr{}},
		{"XForwardedFor/3 hops", Must(XForwardedFor(proxies)), xff("6.6.6.6, 203.0.113.7, 10.0.0.2")},
		{"XForwardedFor/IPv6", Must(XForwardedFor(proxies)), xff("2001:db8:1:2::7")},
		{"XForwardedFor/1000 entries of padding", Must(XForwardedFor(proxies)), xff(strings.Repeat("6.6.6.6, ", 1000) + "203.0.113.7, 10.0.0.2")},
		{"Forwarded/2 elements", Must(Forwarded(proxies)), forwarded(`for="[2001:db8::7]:4711";proto=https, for=10.0.0.2`)},
		{"XRealIP", Must(XRealIP(proxies)), hdr{"X-Real-IP", "203.0.113.7"}},
		{"Header", Must(Header("X-API-Key")), hdr{"X-API-Key", "s3cr3t-s3cr3t-s3cr3t"}},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			r := newRequest("10.0.0.1:4000")
			if bm.line.name != "" {
				r.Header.Add(bm.line.name, bm.line.value)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bm.fn(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
