package refapi

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// OpenStore returns the Redis store when REDIS_URL is set (every node of
// the API then shares the limits) and the memory store otherwise, with a
// description for the start-up log and a function that releases it.
func OpenStore(ctx context.Context) (core.Store, string, func() error, error) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		s, err := memstore.New()
		return s, "memory store", func() error { return nil }, err
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// Safe settings for the limiter's 50 ms deadline: context timeouts on,
	// no retries of a script that may have run (a double charge).
	client := redisstore.NewClient(opts, core.DefaultTimeout)
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		return nil, "", nil, fmt.Errorf("redis at %s: %w", opts.Addr, err)
	}
	s, err := redisstore.New(client, redisstore.WithBudget(core.DefaultTimeout))
	if err != nil {
		_ = client.Close()
		return nil, "", nil, err
	}
	return s, "redis at " + opts.Addr, client.Close, nil
}

// ConfigFromEnv reads TRUSTED_PROXIES (comma-separated CIDRs of the load
// balancers in front of the API; empty means none).
func ConfigFromEnv() (Config, error) {
	var cfg Config
	for _, s := range strings.Split(os.Getenv("TRUSTED_PROXIES"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return cfg, fmt.Errorf("TRUSTED_PROXIES: %w", err)
		}
		cfg.TrustedProxies = append(cfg.TrustedProxies, p)
	}
	return cfg, nil
}

// Addr returns $ADDR, or 127.0.0.1:8080.
func Addr() string {
	if a := os.Getenv("ADDR"); a != "" {
		return a
	}
	return "127.0.0.1:8080"
}

// Serve runs the reference API built by newRouter on [Addr] until it
// fails: the store from [OpenStore], the client identity from
// [ConfigFromEnv]. framework names the router in the start-up log.
func Serve(framework string, newRouter func(*Policy) http.Handler) error {
	store, desc, closeStore, err := OpenStore(context.Background())
	if err != nil {
		return err
	}
	defer closeStore()
	cfg, err := ConfigFromEnv()
	if err != nil {
		return err
	}
	p, err := New(store, cfg)
	if err != nil {
		return err
	}
	log.Printf("reference API (%s, %s) on http://%s", framework, desc, Addr())
	return http.ListenAndServe(Addr(), newRouter(p))
}
