package refapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/policy"
	"github.com/ratelimitkit/ratelimit/keyfunc"
	ratelimitprom "github.com/ratelimitkit/ratelimit/metrics/prometheus"
)

// DemoKeys are the demo's API keys and their plans. Real services look keys
// up in their database (a core.TierResolver, cached by the limiter).
var DemoKeys = map[string]string{
	"pro-demo-key":        "pro",
	"enterprise-demo-key": "enterprise",
	"free-demo-key-1":     "free",
	"free-demo-key-2":     "free",
	"free-demo-key-3":     "free",
}

// Tiers are the limits of /api/hello: a token bucket for bursts and a
// fixed-window daily quota, which resets at 00:00 UTC.
func Tiers() []core.Tier {
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

// LoginLimit is the login limiter's limit: 5 failed logins a minute per
// account and address, and a lockout of a client that keeps guessing.
func LoginLimit() core.Limit {
	return core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog).WithLockout(core.Lockout{
		After: 10, Within: time.Minute, For: 30 * time.Second, Multiplier: 2, Max: time.Hour, Cooldown: 10 * time.Minute})
}

// A Policy is the four limiters of the reference API, the middleware
// options each is mounted with, and the metrics they report. With a policy
// file ([Config.PolicyFile]) it watches the file until [Policy.Close].
type Policy struct {
	API, Login, Webhook, Export                             *core.Limiter
	APIOptions, LoginOptions, WebhookOptions, ExportOptions []httplimit.Option
	// Metrics serves the limiters' Prometheus metrics (GET /metrics).
	Metrics http.Handler

	watcher *policy.Watcher // nil without a policy file
}

// Limiters returns the four limiters by the names a policy file gives
// them (policy.yaml): api, login, hook and export.
func (p *Policy) Limiters() map[string]*core.Limiter {
	return map[string]*core.Limiter{"api": p.API, "login": p.Login, "hook": p.Webhook, "export": p.Export}
}

// Close stops watching the policy file, if there is one; the limiters keep
// the tiers they have.
func (p *Policy) Close() error {
	if p.watcher == nil {
		return nil
	}
	return p.watcher.Close()
}

// Config says how the reference API identifies clients and where it logs.
type Config struct {
	// TrustedProxies are the load balancers whose X-Forwarded-For is
	// believed. Empty: the TCP peer address is the client.
	TrustedProxies []netip.Prefix
	// Logger receives the sampled violation logs and the policy file's
	// reloads; nil is slog.Default().
	Logger *slog.Logger
	// PolicyFile, when set, is a policy file (core/policy) whose tiers the
	// limiters take instead of those of the code, at once and whenever the
	// file changes or the process gets SIGHUP; a file that fails is logged
	// and the tiers in force stay. policy.yaml, beside this file, describes
	// the code's tiers: start from it.
	PolicyFile string
}

// TrustedProxies returns the CIDRs the variable TRUSTED_PROXIES lists,
// comma-separated: the load balancers of [Config.TrustedProxies].
func TrustedProxies(getenv func(string) string) ([]netip.Prefix, error) {
	var trusted []netip.Prefix
	for _, cidr := range list(getenv("TRUSTED_PROXIES")) {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return nil, fmt.Errorf("TRUSTED_PROXIES: %w", err)
		}
		trusted = append(trusted, p)
	}
	return trusted, nil
}

// New returns the reference policy over store.
func New(store core.Store, cfg Config) (*Policy, error) {
	ip, err := clientIP(cfg.TrustedProxies)
	account, accountErr := keyfunc.FormValue("account")
	fallback, fallbackErr := memstore.New()
	if err := errors.Join(err, accountErr, fallbackErr); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p := &Policy{
		APIOptions: []httplimit.Option{
			httplimit.WithKey(ip),            // no key, or an unknown one: the address (core.WithTierKeyIdentity)
			httplimit.WithTierKey(rawAPIKey), // the resolver looks the raw key up; the identity stays hashed
		},
		LoginOptions: []httplimit.Option{httplimit.WithKey(keyfunc.Composite(account, ip)),
			httplimit.WithChargeIf(httplimit.FailedRequests)}, // only a 401 (or any failure) counts
		WebhookOptions: []httplimit.Option{httplimit.WithKey(keyfunc.PathValue("source"))},
		// The client of an export is the client of the API: a known key, so
		// that users behind one NAT each have their own places, else the IP;
		// an invented key counts as none, so it mints no places.
		ExportOptions: []httplimit.Option{httplimit.WithKey(ip), httplimit.WithTierKey(rawAPIKey)},
		Metrics:       promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}
	logger := cmp.Or(cfg.Logger, slog.Default())
	violations := core.NewSlogObserver(logger) // sampled; clients appear hashed
	if err := p.newLimiters(store, fallback, reg, violations); err != nil {
		return nil, err
	}
	if cfg.PolicyFile != "" {
		if err := p.watch(cfg.PolicyFile, logger); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// watch gives the limiters the tiers of the policy file at path, and
// again whenever it changes.
func (p *Policy) watch(path string, logger *slog.Logger) error {
	apply := func(pol *policy.Policy) error { return policy.Apply(pol, p.Limiters()) }
	w, err := policy.Watch(path, apply, policy.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("policy file: %w", err)
	}
	p.watcher = w
	return nil
}

// newLimiters makes p's four limiters over store; fallback is the local
// store of the two that fail to local limits.
func (p *Policy) newLimiters(store, fallback core.Store, reg prometheus.Registerer, violations core.Observer) error {
	// Fail open: a Redis outage must not become an API outage.
	var apiErr, loginErr, hookErr, exportErr error
	p.API, apiErr = newLimiter("api", store, reg, violations, core.WithTiers(Tiers()...),
		core.WithTierResolver(PlanOf, time.Minute, 10_000), core.WithTierKeyIdentity(), core.WithFailureMode(core.FailOpen))
	// Not open: a brute-force guard that fails open is a bypass while Redis
	// is down, or while an attacker keeps it busy. Not closed: that locks
	// every user out. Local: each node guards on its own, so with N nodes a
	// guesser gets at most 5N tries a minute (WithFallback(fallback, N)
	// keeps the fleet at 5, each node then allowing 5/N rounded up). Only
	// failed logins count (httplimit.WithChargeIf): signing in costs nothing;
	// guesses sent at once may all pass the check, so the bound is 4 plus
	// the guesses in flight together.
	//
	// A guesser who keeps going after the limit is locked out (reason
	// LockedOut, problem type "locked-out"): 10 denials within a minute lock
	// it out for 30s, each further lockout within the cool-down twice as
	// long, up to an hour. The deny cache lets the denials a lockout counts
	// through to the store (at most 10 a minute per guesser), then holds
	// the lockout: the guesser's flood costs the store nothing until it ends.
	login := LoginLimit()
	p.Login, loginErr = newLimiter("login", store, reg, violations, core.WithLimits(login),
		core.WithFailureMode(core.FailLocal), core.WithFallback(fallback, 1))
	// Fail open: this limit smooths a sender's bursts; it guards no secret.
	// A sliding window: no burst at the window's boundary.
	hook := core.Limit{Rate: 100, Period: 10 * time.Second, Name: "webhook", Algorithm: core.SlidingWindow}
	p.Webhook, hookErr = newLimiter("hook", store, reg, violations, core.WithLimits(hook), core.WithFailureMode(core.FailOpen))
	// The cost of an export is its duration, so it is limited in flight: the
	// middleware releases the lease when the handler returns. Local: this
	// limit guards the servers' capacity, which a Redis outage does not
	// enlarge; each node then holds 2 per client itself (so with N nodes at
	// most 2N).
	export := core.Concurrent(2).WithName("export")
	p.Export, exportErr = newLimiter("export", store, reg, violations, core.WithLimits(export),
		core.WithTierResolver(knownKey, time.Minute, 10_000), core.WithTierKeyIdentity(),
		core.WithFailureMode(core.FailLocal), core.WithFallback(fallback, 1))
	return errors.Join(apiErr, loginErr, hookErr, exportErr)
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

func clientIP(trusted []netip.Prefix) (keyfunc.Func, error) {
	if len(trusted) == 0 {
		return keyfunc.PeerIP()
	}
	return keyfunc.XForwardedFor(trusted)
}

// PlanOf is the API limiter's core.TierResolver, standing in for your
// API-key database: the limiter caches its answers by a hash of the key,
// asks once for concurrent requests of one key, within its timeout. "", for
// an unknown key, is the first tier, free, and (core.WithTierKeyIdentity)
// leaves the request keyed by its address: an invented key mints no quota.
func PlanOf(_ context.Context, apiKey string) (string, error) {
	return DemoKeys[apiKey], nil
}

// knownKey is the export limiter's core.TierResolver: its one tier for a
// key PlanOf knows, so that (core.WithTierKeyIdentity) a known key has its
// own places and any other request those of its address.
func knownKey(_ context.Context, apiKey string) (string, error) {
	if DemoKeys[apiKey] == "" {
		return "", nil
	}
	return core.DefaultTierName, nil
}

// rawAPIKey is PlanOf's lookup key (httplimit.WithTierKey): the raw X-API-Key,
// which only the resolver sees; the identity stays hashed.
func rawAPIKey(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil }
