// Command echo serves a rate-limited API with echo, in one file to copy:
//
//	GET  /api/hello         tiered by X-API-Key: none or unknown is "free" per client IP (burst 100,
//	                        10/s), then "pro" (1000, 100/s) and "enterprise" (10000, 1000/s); a daily quota
//	POST /login             brute-force guard: 5 failed logins a minute per account and IP;
//	                        the body is JSON, {"account": "alice", "password": "..."}
//	POST /webhooks/:source  100 per 10 s per source
//	GET  /api/export        about 300 ms of work, at most 2 in flight per client (API key or IP)
//	GET  /healthz, /metrics never limited
//
// The environment configures it, all optional: ADDR (default
// 127.0.0.1:8080); one of REDIS_URL (redis://127.0.0.1:6379/0),
// REDIS_CLUSTER_ADDRS (comma-separated seeds) or REDIS_SENTINEL_ADDRS with
// REDIS_SENTINEL_MASTER, else the limits live in memory, right for one
// instance only; TRUSTED_PROXIES, comma-separated CIDRs of the load
// balancers whose X-Forwarded-For is believed. SIGINT or SIGTERM drains
// the requests in flight and exits.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	ratelimitecho "github.com/ratelimitkit/ratelimit/adapters/echo"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/keyfunc"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

func main() {
	// The first SIGINT or SIGTERM drains; a second one kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	ln, err := net.Listen("tcp", cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080"))
	if err == nil {
		err = run(ctx, ln, os.Getenv, slog.Default())
	}
	if err != nil {
		slog.Error("echo example", "error", err)
		os.Exit(1)
	}
}

// run serves on ln until ctx is done, then stops accepting and drains.
func run(ctx context.Context, ln net.Listener, getenv func(string) string, logger *slog.Logger) error {
	defer ln.Close()
	store, desc, closeStore, err := openStore(ctx, getenv, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	var trusted []netip.Prefix
	for _, cidr := range list(getenv("TRUSTED_PROXIES")) {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return fmt.Errorf("TRUSTED_PROXIES: %w", err)
		}
		trusted = append(trusted, p)
	}
	h, err := newHandler(store, trusted, logger, buildExport)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	logger.Info("serving (echo)", "store", desc, "addr", "http://"+ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Drain for less than the 10 s after which docker stop and most
	// supervisors send SIGKILL.
	drain, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	if err := srv.Shutdown(drain); err != nil {
		// A request outlived the drain: cut it off and still exit 0, since
		// stopping was asked for and is done.
		logger.Warn("requests outlived the drain; closing their connections", "error", err)
		return srv.Close()
	}
	return nil
}

// newHandler returns the API over store. trusted are the load balancers
// whose X-Forwarded-For is believed; with none the TCP peer is the client.
// export is the work of GET /api/export: buildExport, or a test's.
func newHandler(store core.Store, trusted []netip.Prefix, logger *slog.Logger, export func(context.Context) error) (http.Handler, error) {
	ip, err := keyfunc.PeerIP()
	if len(trusted) > 0 {
		ip, err = keyfunc.XForwardedFor(trusted)
	}
	account, accountErr := keyfunc.FormValue("account")
	fallback, fallbackErr := memstore.New()
	if err := errors.Join(err, accountErr, fallbackErr); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	violations := core.NewSlogObserver(logger) // sampled; clients appear hashed

	// Fail open: a Redis outage must not become an API outage.
	api, apiErr := newLimiter("api", store, reg, violations, core.WithTiers(tiers()...),
		core.WithTierResolver(planOf, time.Minute, 10_000), core.WithTierKeyIdentity(), core.WithFailureMode(core.FailOpen))
	// Not open: a brute-force guard that fails open is a bypass while Redis
	// is down, or while an attacker keeps it busy. Not closed: that locks
	// every user out. Local: each node guards on its own, so with N nodes a
	// guesser gets at most 5N tries a minute (WithFallback(fallback, N)
	// keeps the fleet at 5, each node then allowing 5/N rounded up). Only
	// failed logins count (httplimit.WithChargeIf below): signing in costs
	// nothing; guesses sent at once may all pass the check, so the bound is
	// 4 plus the guesses in flight together.
	loginLimit := core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog)
	login, loginErr := newLimiter("login", store, reg, violations, core.WithLimits(loginLimit),
		core.WithFailureMode(core.FailLocal), core.WithFallback(fallback, 1))
	// Fail open: this limit smooths a sender's bursts; it guards no secret.
	hookLimit := core.Limit{Rate: 100, Period: 10 * time.Second, Name: "webhook", Algorithm: core.SlidingWindow}
	hook, hookErr := newLimiter("hook", store, reg, violations, core.WithLimits(hookLimit), core.WithFailureMode(core.FailOpen))
	// Local: an export costs its duration, so this limit guards the
	// servers' capacity, which a Redis outage does not enlarge; each node
	// then holds 2 per client itself (so with N nodes at most 2N).
	exportLimit := core.Concurrent(2).WithName("export")
	exporter, exportErr := newLimiter("export", store, reg, violations, core.WithLimits(exportLimit),
		core.WithTierResolver(knownKey, time.Minute, 10_000), core.WithTierKeyIdentity(),
		core.WithFailureMode(core.FailLocal), core.WithFallback(fallback, 1))
	if err := errors.Join(apiErr, loginErr, hookErr, exportErr); err != nil {
		return nil, err
	}

	e := echo.New()
	// The core problem+json body on denials, as the other frameworks send;
	// without it echo's HTTPErrorHandler renders the 429.
	deny := httplimit.WithDenyHandler(httplimit.DefaultDenyHandler)
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, echo.Map{"status": "ok"}) })
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	e.GET("/api/hello", func(c echo.Context) error { return c.JSON(http.StatusOK, echo.Map{"message": "hello"}) },
		ratelimitecho.New(api, httplimit.WithKey(ip), httplimit.WithTierKey(rawAPIKey), deny))
	e.POST("/login", func(c echo.Context) error {
		var in struct{ Account, Password string } // the JSON body the limiter read first and put back
		if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
			return c.JSON(http.StatusBadRequest, echo.Map{"error": `want a JSON body {"account": ..., "password": ...}`})
		}
		if in.Account == "alice" && in.Password == "correct-horse-battery-staple" { // your real check
			return c.JSON(http.StatusOK, echo.Map{"message": "welcome"})
		}
		return c.JSON(http.StatusUnauthorized, echo.Map{"error": "wrong account or password"})
	}, ratelimitecho.New(login, httplimit.WithKey(keyfunc.Composite(account, ip)), httplimit.WithChargeIf(httplimit.FailedRequests), deny))
	e.POST("/webhooks/:source", func(c echo.Context) error {
		return c.JSON(http.StatusAccepted, echo.Map{"received_from": c.Param("source")})
	}, ratelimitecho.New(hook, httplimit.WithKey(keyfunc.PathValue("source")), deny))
	e.GET("/api/export", func(c echo.Context) error {
		if err := export(c.Request().Context()); err != nil { // the client gave up
			return c.JSON(http.StatusServiceUnavailable, echo.Map{"error": "export not finished"})
		}
		return c.JSON(http.StatusOK, echo.Map{"status": "exported"})
	}, ratelimitecho.New(exporter, httplimit.WithKey(ip), httplimit.WithTierKey(rawAPIKey), deny))
	return e, nil
}

// exportTime is how long buildExport works.
const exportTime = 300 * time.Millisecond

// buildExport stands in for your export's work (building a report): it
// takes exportTime, returning early with ctx's error when the client gives up.
func buildExport(ctx context.Context) error {
	t := time.NewTimer(exportTime)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newLimiter returns the limiter name with the options all four share:
// its own key prefix, so limiters never count against each other; a
// breaker, so a dead Redis costs a request nothing rather than the timeout;
// and its own metrics (label limiter=name), so each breaker shows apart.
// The deny cache is on by default: a blocked client is answered here until
// its Retry-After, so its flood never reaches Redis.
func newLimiter(name string, store core.Store, reg prometheus.Registerer, log core.Observer, opts ...core.Option) (*core.Limiter, error) {
	metrics := ratelimitprom.MustNew(ratelimitprom.WithConstLabels(prometheus.Labels{"limiter": name}))
	reg.MustRegister(metrics)
	opts = append([]core.Option{core.WithPrefix("rl:" + name), core.WithBreaker(core.BreakerConfig{}),
		core.WithObserver(metrics), core.WithObserver(log)}, opts...)
	return core.NewLimiter(metrics.InstrumentStore(store), opts...)
}

// tiers are the limits of /api/hello: a token bucket for bursts and a
// fixed-window daily quota, which resets at 00:00 UTC.
func tiers() []core.Tier {
	tier := func(name string, rate, burst, daily int64) core.Tier {
		return core.Tier{Name: name, Limits: []core.Limit{
			core.PerSecond(rate).WithBurst(burst).WithName("burst"),
			core.PerDay(daily).WithName("daily").WithAlgorithm(core.FixedWindow),
		}}
	}
	return []core.Tier{
		tier("free", 10, 100, 1_000), tier("pro", 100, 1_000, 100_000), tier("enterprise", 1_000, 10_000, 10_000_000),
	}
}

// planOf is the api limiter's core.TierResolver, standing in for your
// API-key database: the limiter caches its answers by a hash of the key,
// asks once for concurrent requests of one key, within its timeout. "",
// for an unknown key, is the first tier, free, and (core.WithTierKeyIdentity)
// leaves the request keyed by its address: an invented key mints no quota.
func planOf(_ context.Context, apiKey string) (string, error) {
	switch apiKey {
	case "pro-demo-key":
		return "pro", nil
	case "enterprise-demo-key":
		return "enterprise", nil
	case "free-demo-key-1", "free-demo-key-2", "free-demo-key-3":
		return "free", nil
	}
	return "", nil
}

// knownKey is the export limiter's core.TierResolver: its one tier for a
// key planOf knows, so that (core.WithTierKeyIdentity) a known key has its
// own places and any other request those of its address.
func knownKey(ctx context.Context, apiKey string) (string, error) {
	if plan, err := planOf(ctx, apiKey); plan == "" || err != nil {
		return "", err
	}
	return core.DefaultTierName, nil
}

// rawAPIKey is the lookup key of planOf (httplimit.WithTierKey): the raw key,
// which only the resolver sees; the identity stays hashed.
func rawAPIKey(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil }

// openStore returns the store the environment names, its description for
// the start-up log and a function that closes its client.
func openStore(ctx context.Context, getenv func(string) string, logger *slog.Logger) (core.Store, string, func() error, error) {
	var set []string
	for _, name := range []string{"REDIS_URL", "REDIS_CLUSTER_ADDRS", "REDIS_SENTINEL_ADDRS"} {
		if getenv(name) != "" {
			set = append(set, name)
		}
	}
	cluster, clusterErr := addrs(getenv, "REDIS_CLUSTER_ADDRS")
	sentinels, sentinelErr := addrs(getenv, "REDIS_SENTINEL_ADDRS")
	master := getenv("REDIS_SENTINEL_MASTER")
	var client redis.UniversalClient
	var desc string
	// The redisstore constructors keep each call within the limiter's
	// timeout: deadlines honoured, no retried (so double-charged) script.
	switch {
	case len(set) > 1:
		return nil, "", nil, fmt.Errorf("%s contradict each other: set one", strings.Join(set, " and "))
	case clusterErr != nil || sentinelErr != nil:
		return nil, "", nil, errors.Join(clusterErr, sentinelErr)
	case (len(sentinels) > 0) != (master != ""):
		return nil, "", nil, errors.New("REDIS_SENTINEL_ADDRS and REDIS_SENTINEL_MASTER go together")
	case len(cluster) > 0:
		client = redisstore.NewClusterClient(&redis.ClusterOptions{Addrs: cluster})
		desc = "redis cluster " + strings.Join(cluster, ",")
	case len(sentinels) > 0:
		opts := &redis.FailoverOptions{MasterName: master, SentinelAddrs: sentinels}
		client = redisstore.NewFailoverClient(opts)
		desc = fmt.Sprintf("redis sentinel master %s via %s", master, strings.Join(sentinels, ","))
	case getenv("REDIS_URL") != "":
		opts, err := redis.ParseURL(getenv("REDIS_URL"))
		if err != nil {
			return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		client = redisstore.NewClient(opts)
		desc = "redis " + opts.Addr
	default:
		s, err := memstore.New()
		return s, "memory store", func() error { return nil }, err
	}
	// A warning, not an exit: the limiters serve through a Redis outage, so
	// starting during one is no different.
	ping, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := client.Ping(ping).Err(); err != nil {
		logger.Warn("redis unreachable; limits degrade until it answers", "store", desc, "error", err)
	} else if cc, ok := client.(*redis.ClusterClient); ok {
		warnCoverage(ping, cc, logger)
	}
	s, err := redisstore.New(client, redisstore.WithLogger(logger))
	if err != nil {
		return nil, "", nil, errors.Join(err, client.Close())
	}
	return s, desc, client.Close, nil
}

// warnCoverage logs when the cluster's masters stop serving while any
// one of them is down (cluster-require-full-coverage yes, Redis's
// default): every node of the API would fail open together.
func warnCoverage(ctx context.Context, c *redis.ClusterClient, logger *slog.Logger) {
	cov, err := redisstore.CheckCoverage(ctx, c)
	if err != nil {
		logger.Warn("cluster-require-full-coverage could not be checked", "error", err)
	} else if w := cov.Warning(); w != "" {
		logger.Warn(w)
	}
}

// addrs returns the addresses the variable name lists. One that is set
// but lists none is an error, not "no Redis": each node would otherwise
// keep its own limits in memory, without a word.
func addrs(getenv func(string) string, name string) ([]string, error) {
	v := getenv(name)
	a := list(v)
	if v != "" && len(a) == 0 {
		return nil, fmt.Errorf("%s is set but lists no address (%q): list host:port seeds, comma-separated, or unset it", name, v)
	}
	return a, nil
}

// list splits a comma-separated list, dropping blanks.
func list(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}
