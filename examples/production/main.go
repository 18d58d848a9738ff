// Command production serves the reference API (examples/refapi) as a
// production service would, with the framework of your choice:
//
//	go run ./examples/production -framework gin   # or echo, chi, nethttp (the default)
//
// The routes, their limits and why each fails the way it does are in
// examples/refapi: tiers by API key, a login guard, webhooks per source,
// exports limited in flight, /healthz and /metrics never limited. This file
// adds what a process needs around them.
//
// The environment configures it, all optional: ADDR (default
// 127.0.0.1:8080); one of REDIS_URL (redis://127.0.0.1:6379/0),
// REDIS_CLUSTER_ADDRS (comma-separated seeds) or REDIS_SENTINEL_ADDRS with
// REDIS_SENTINEL_MASTER, else the limits live in memory, right for one
// instance only; TRUSTED_PROXIES, comma-separated CIDRs of the load
// balancers whose X-Forwarded-For is believed; POLICY_FILE, a policy file
// (examples/refapi/policy.yaml describes the code's limits) whose tiers
// the limiters take, at once and whenever it changes or the process gets
// SIGHUP. SIGINT or SIGTERM drains the requests in flight and exits.
package main

import (
	"cmp"
	"context"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ratelimitkit/ratelimit/examples/refapi"
)

func main() {
	framework := flag.String("framework", "nethttp", "the router: gin, echo, chi or nethttp")
	flag.Parse()
	// The first SIGINT or SIGTERM drains; a second one kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	router, err := refapi.RouterOf(*framework)
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080"))
	}
	logger := slog.Default().With("framework", *framework)
	if err == nil {
		err = run(ctx, ln, router, os.Getenv, logger)
	}
	if err != nil {
		logger.Error("production example", "error", err)
		os.Exit(1)
	}
}

// run serves the reference API with router on ln until ctx is done, then
// stops accepting and drains.
func run(ctx context.Context, ln net.Listener, router refapi.Router, getenv func(string) string, logger *slog.Logger) error {
	defer ln.Close()
	store, desc, closeStore, err := refapi.OpenStore(ctx, getenv, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	trusted, err := refapi.TrustedProxies(getenv)
	if err != nil {
		return err
	}
	p, err := refapi.New(store, refapi.Config{TrustedProxies: trusted, Logger: logger, PolicyFile: getenv("POLICY_FILE")})
	if err != nil {
		return err
	}
	defer p.Close()
	srv := &http.Server{Handler: router(p, refapi.BuildExport), ReadHeaderTimeout: 5 * time.Second}
	logger.Info("serving", "store", desc, "addr", "http://"+ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	return drain(srv, logger)
}

// drain stops srv, letting the requests in flight finish for less than
// the 10 s after which docker stop and most supervisors send SIGKILL.
func drain(srv *http.Server, logger *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		// A request outlived the drain: cut it off and still exit 0, since
		// stopping was asked for and is done.
		logger.Warn("requests outlived the drain; closing their connections", "error", err)
		return srv.Close()
	}
	return nil
}
