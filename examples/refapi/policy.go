// Package refapi is the reference API that `make demo` (cmd/demo) drives:
//
//	GET  /api/hello          tiered by X-API-Key: no or unknown key -> "free" per client IP
//	                         (burst 100, 10/s), pro-demo-key -> "pro" (1000, 100/s),
//	                         enterprise-demo-key -> "enterprise" (10000, 1000/s);
//	                         plus a daily quota per tier (two limits, taken together)
//	POST /login              brute-force guard: 5 failed logins per minute per
//	                         (account + IP); successful logins are not counted
//	POST /webhooks/{source}  100 per 10 s per source, sliding window
//	                         (no boundary burst; for bursty senders docs/algorithms.md
//	                         recommends GCRA with a large burst)
//	GET  /api/export         about 300 ms of work, at most 2 in flight per client
//	                         (API key or IP, as /api/hello), whatever the tier
//	GET  /healthz            never limited
//
// The example servers (examples/gin, examples/echo, examples/chi,
// examples/nethttp) each carry their own copy of this policy, so that each
// is one file to copy; refapitest runs the same scenarios through all of
// them and through cmd/demo's router, so the copies cannot drift apart.
// This package holds the demo's: the limiters, their middleware options,
// the handlers and the store.
package refapi

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// Demo API keys and their tiers. Real services look keys up in their
// database (a core.TierResolver, cached by the limiter).
var DemoKeys = map[string]string{
	"pro-demo-key":        "pro",
	"enterprise-demo-key": "enterprise",
	"free-demo-key-1":     "free",
	"free-demo-key-2":     "free",
	"free-demo-key-3":     "free",
}

// Tiers of /api/hello: the recipe's token buckets plus a daily quota
// (a fixed window, so it resets at 00:00 UTC).
func Tiers() []core.Tier {
	tier := func(name string, rate, burst, daily int64) core.Tier {
		return core.Tier{Name: name, Limits: []core.Limit{
			core.PerSecond(rate).WithBurst(burst).WithName("burst"),
			core.PerDay(daily).WithName("daily").WithAlgorithm(core.FixedWindow),
		}}
	}
	return []core.Tier{
		tier("free", 10, 100, 1_000),
		tier("pro", 100, 1_000, 100_000),
		tier("enterprise", 1_000, 10_000, 10_000_000),
	}
}

// A Policy is the four limiters of the reference API and the middleware
// options each is mounted with.
type Policy struct {
	API, Login, Webhook, Export                             *core.Limiter
	APIOptions, LoginOptions, WebhookOptions, ExportOptions []httplimit.Option
}

// Config says how the reference API identifies clients.
type Config struct {
	// TrustedProxies are the load balancers whose X-Forwarded-For is
	// believed. Empty: the TCP peer address is the client.
	TrustedProxies []netip.Prefix
}

// New returns the reference policy over store.
func New(store core.Store, cfg Config) (*Policy, error) {
	ip, err := clientIP(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	account, err := keyfunc.FormValue("account")
	if err != nil {
		return nil, err
	}
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
	}
	// Distinct prefixes: the four limiters never count against each other.
	if p.API, err = core.NewLimiter(store, core.WithPrefix("rl:api"), core.WithTiers(Tiers()...),
		core.WithTierResolver(PlanOf, time.Minute, 10_000), core.WithTierKeyIdentity()); err != nil {
		return nil, err
	}
	login := core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog)
	if p.Login, err = core.NewLimiter(store, core.WithPrefix("rl:login"), core.WithLimits(login)); err != nil {
		return nil, err
	}
	hook := core.Limit{Rate: 100, Period: 10 * time.Second, Name: "webhook", Algorithm: core.SlidingWindow}
	if p.Webhook, err = core.NewLimiter(store, core.WithPrefix("rl:hook"), core.WithLimits(hook)); err != nil {
		return nil, err
	}
	// The cost of an export is its duration, so it is limited in flight:
	// the middleware releases the lease when the handler returns.
	export := core.Concurrent(2).WithName("export")
	if p.Export, err = core.NewLimiter(store, core.WithPrefix("rl:export"), core.WithLimits(export),
		core.WithTierResolver(knownKey, time.Minute, 10_000), core.WithTierKeyIdentity()); err != nil {
		return nil, err
	}
	return p, nil
}

func clientIP(trusted []netip.Prefix) (keyfunc.Func, error) {
	if len(trusted) == 0 {
		return keyfunc.PeerIP()
	}
	return keyfunc.XForwardedFor(trusted)
}

// PlanOf is the API limiter's core.TierResolver: the plan of an API key,
// standing in for a database query; the limiter caches its answers by a
// hash of the key. An unknown key has none, "": the default tier, free,
// and (core.WithTierKeyIdentity) the request stays keyed by its address,
// so inventing keys mints no quota.
func PlanOf(_ context.Context, apiKey string) (string, error) {
	return DemoKeys[apiKey], nil
}

// knownKey is the export limiter's core.TierResolver: its one tier for a
// known key, which then (core.WithTierKeyIdentity) has its own places.
func knownKey(_ context.Context, apiKey string) (string, error) {
	if DemoKeys[apiKey] == "" {
		return "", nil
	}
	return core.DefaultTierName, nil
}

// rawAPIKey is PlanOf's lookup key (httplimit.WithTierKey): the raw X-API-Key.
func rawAPIKey(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil }
