package recipes

import (
	"net/http"
	"time"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// TieredAPI returns the middleware of an API whose limits follow each API
// key's plan, which plan looks up in the application's database: the plan
// of a raw X-API-Key, "" for a key it does not know. The limiter caches its
// answers, asks it only for clients the deny cache does not hold, and keeps
// the last known plan while the database fails. A request without a known
// key is limited per address (ip) on the default tier, free.
func TieredAPI(store core.Store, plan core.TierResolver, ip keyfunc.Func) (func(http.Handler) http.Handler, error) {
	// One limit name in every tier: a key that changes plan keeps its usage.
	tier := func(name string, rate, burst int64) core.Tier {
		return core.Tier{Name: name, Limits: []core.Limit{core.PerSecond(rate).WithBurst(burst).WithName("api")}}
	}
	limiter, err := core.NewLimiter(store, core.WithPrefix("rl:api"), core.WithDefaultTier("free"),
		core.WithTiers(tier("free", 10, 100), tier("pro", 100, 1_000), tier("enterprise", 1_000, 10_000)),
		core.WithTierResolver(plan, time.Minute, 10_000), // cached by a hash of the key, one call per key at once
		core.WithTierStale(time.Hour),                    // the database fails: the last known plan, an hour past the TTL
		core.WithTierKeyIdentity())                       // a known key is its own client; an invented one is not
	if err != nil {
		return nil, err
	}
	return ratelimithttp.New(limiter,
		httplimit.WithKey(ip),         // no key, or one plan does not know: the address
		httplimit.WithTierKey(apiKey), // what plan looks up; the identity stays hashed
	), nil
}

// apiKey is the lookup key of TieredAPI's resolver: the raw X-API-Key, ""
// without one (the default tier, with no lookup).
func apiKey(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil }
