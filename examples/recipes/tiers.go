package recipes

import (
	"context"
	"net/http"
	"sync"
	"time"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// TieredAPI returns the middleware of an API whose limits follow each API
// key's plan, which plans looks up in the application's database. A request
// without a known key is limited per address (ip) on the default tier, free.
func TieredAPI(store core.Store, plans *PlanCache, ip keyfunc.Func) (func(http.Handler) http.Handler, error) {
	// One limit name in every tier: a key that changes plan keeps its usage.
	tier := func(name string, rate, burst int64) core.Tier {
		return core.Tier{Name: name, Limits: []core.Limit{core.PerSecond(rate).WithBurst(burst).WithName("api")}}
	}
	limiter, err := core.NewLimiter(store, core.WithPrefix("rl:api"), core.WithDefaultTier("free"),
		core.WithTiers(tier("free", 10, 100), tier("pro", 100, 1_000), tier("enterprise", 1_000, 10_000)))
	if err != nil {
		return nil, err
	}
	return ratelimithttp.New(limiter,
		core.HTTPKeyFunc(keyfunc.FirstOf(plans.Key, ip)), // an invented key mints no quota
		core.HTTPTierFunc(plans.Tier),                    // "" (no or unknown key): the default tier
	), nil
}

// A PlanCache remembers the plan of each API key for a while, so the
// database is asked once per key and TTL, not on every request. It holds at
// most size keys, by their hash (a client chooses how long its key is).
// Unknown keys are remembered too, so an invented key reaches the database
// once. When a lookup fails, an expired answer is used if there is one,
// else the request gets the default tier.
type PlanCache struct {
	lookup func(ctx context.Context, apiKey string) (plan string, err error) // "" for an unknown key
	ttl    time.Duration
	size   int
	apiKey keyfunc.Func // X-API-Key, hashed

	mu    sync.Mutex
	plans map[string]cachedPlan // by hashed key
}

type cachedPlan struct {
	plan    string
	expires time.Time
}

// NewPlanCache returns a PlanCache over lookup, the database query.
func NewPlanCache(lookup func(ctx context.Context, apiKey string) (string, error), ttl time.Duration, size int) *PlanCache {
	return &PlanCache{lookup: lookup, ttl: ttl, size: size, plans: make(map[string]cachedPlan),
		apiKey: keyfunc.Must(keyfunc.Header("X-API-Key"))}
}

// Tier is a [core.TierFunc]: the plan of r's X-API-Key, "" when it has
// none or the key is unknown.
func (c *PlanCache) Tier(r *http.Request) string {
	id, err := c.apiKey(r)
	if err != nil {
		return "" // no key, or an absurdly long one
	}
	now := time.Now()
	c.mu.Lock()
	cached, ok := c.plans[id]
	c.mu.Unlock()
	if ok && now.Before(cached.expires) {
		return cached.plan
	}
	plan, err := c.lookup(r.Context(), r.Header.Get("X-API-Key"))
	if err != nil {
		return cached.plan // stale, or "" if never known
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.plans[id]; !ok && len(c.plans) >= c.size {
		for k := range c.plans { // full: drop one at random (map order)
			delete(c.plans, k)
			break
		}
	}
	c.plans[id] = cachedPlan{plan: plan, expires: now.Add(c.ttl)}
	return plan
}

// Key is a keyfunc.Func: the hashed API key when the key has a plan, else
// [keyfunc.ErrNoKey], so that [keyfunc.FirstOf] keys the request by address.
func (c *PlanCache) Key(r *http.Request) (string, error) {
	if c.Tier(r) == "" {
		return "", keyfunc.ErrNoKey
	}
	return c.apiKey(r)
}
