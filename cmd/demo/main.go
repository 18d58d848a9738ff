// Command demo shows the library doing its job with no set-up: it starts the
// reference API (examples/refapi) in-process, drives a scripted mix of
// clients at it for a few seconds and prints, per client and per second,
// how many requests were allowed and how many limited, with sample
// responses.
//
//	make demo                          # memory store
//	REDIS_URL=redis://127.0.0.1:6379/0 make demo   # or a Cluster, a Sentinel: refapi.OpenStore
//	go run ./cmd/demo -serve           # keep serving afterwards, for curl
//
// The clients differ by address: the demo plays the load balancer in front
// of the API, so the API trusts X-Forwarded-For from loopback only.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/signal"
	"time"

	"github.com/ratelimitkit/ratelimit/examples/refapi"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

func main() {
	duration := flag.Duration("duration", 5*time.Second, "how long the traffic runs")
	serve := flag.Bool("serve", false, "keep serving the reference API after the run, until interrupted")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (port 0: any free port)")
	flag.Parse()
	if err := run(*duration, *serve, *addr); err != nil {
		log.Fatal(err)
	}
}

func run(duration time.Duration, serve bool, addr string) error {
	if duration < time.Second || duration > time.Minute {
		return fmt.Errorf("-duration must be between 1s and 1m, got %s", duration)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	store, desc, closeStore, err := refapi.OpenStore(ctx, os.Getenv, slog.Default())
	if err != nil {
		return err
	}
	defer closeStore()
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	// The report shows the violations; their log would only cover it.
	quiet := slog.New(slog.DiscardHandler)
	p, err := refapi.New(store, refapi.Config{TrustedProxies: loopback, Logger: quiet})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: refapi.NetHTTP(p, refapi.BuildExport), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	base := "http://" + ln.Addr().String()
	fmt.Printf("ratelimit demo: reference API (net/http, %s) at %s, %s of traffic\n\n", desc, base, duration)
	key, err := keyfunc.XForwardedFor(loopback)
	if err != nil {
		return err
	}
	groups := withLive(scenario(), duration, p.API, identityOf(key))
	report(os.Stdout, groups, drive(ctx, base, duration, groups), int(duration/time.Second))
	if !serve {
		return nil
	}
	printCurl(base)
	<-ctx.Done()
	return nil
}

// identityOf returns the identity key gives a request the load balancer
// forwards for ip: the identity the API limiter keys that client by.
func identityOf(key keyfunc.Func) func(ip string) string {
	return func(ip string) string {
		r := httptest.NewRequest(http.MethodGet, "/api/hello", nil)
		r.RemoteAddr = "127.0.0.1:1"
		r.Header.Set("X-Forwarded-For", ip)
		id, err := key(r)
		if err != nil {
			return ip
		}
		return id
	}
}

func printCurl(base string) {
	fmt.Printf("\nServing %s until interrupted (Ctrl-C). Try:\n", base)
	fmt.Printf("  curl -i %s/api/hello\n", base)
	fmt.Printf("  curl -i -H 'X-API-Key: pro-demo-key' %s/api/hello\n", base)
	fmt.Printf("  curl -i -d account=alice -d password=guess %s/login\n", base)
	fmt.Printf("  curl -i -X POST %s/webhooks/github\n", base)
	fmt.Printf("  for i in 1 2 3; do curl -s -o /dev/null -w '%%{http_code}\\n' %s/api/export & done; wait\n", base)
}
