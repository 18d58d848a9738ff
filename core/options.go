package core

import (
	"errors"
	"fmt"
	"time"
)

// An Option configures a [Limiter] at construction ([NewLimiter]).
type Option func(*config) error

// FailureMode says what a [Limiter] answers when its store fails.
type FailureMode uint8

const (
	// FailOpen admits the request, marks the Result degraded and reports
	// the error in [Result.Err]. It is the default: a rate limiter should
	// not turn a cache outage into an API outage.
	FailOpen FailureMode = iota
	// FailClosed denies the request (adapters answer 503 with Retry-After),
	// marks the Result degraded and reports the error in [Result.Err].
	FailClosed
	// FailLocal decides with the fallback store given to [WithFallback]
	// (typically a memstore), with the same limits divided among the app
	// nodes, and marks the Result degraded.
	FailLocal
)

// String returns the mode's name ("FailOpen").
func (m FailureMode) String() string {
	switch m {
	case FailOpen:
		return "FailOpen"
	case FailClosed:
		return "FailClosed"
	case FailLocal:
		return "FailLocal"
	}
	return fmt.Sprintf("FailureMode(%d)", uint8(m))
}

type config struct {
	tiers       []Tier
	defaultTier string
	prefix      string
	resolver    tierConfig
	keyIdent    bool // WithTierKeyIdentity
	failure     FailureMode
	timeout     time.Duration
	breaker     *BreakerConfig // set by WithBreaker
	noBreaker   bool           // set by WithoutBreaker
	denyCache   int
	fallback    Store
	nodes       int
	observers   []Observer
	shadow      bool
	given       map[string]bool // the single-valued options given
}

// once records that the single-valued option name was given, and fails
// when it already was: the second value would silently replace the first.
func once(given map[string]bool, name string) error {
	if given[name] {
		return fmt.Errorf("ratelimit: %s given twice: the second would silently replace the first", name)
	}
	given[name] = true
	return nil
}

// check reports the options that contradict each other, whatever their
// order.
func (c *config) check() error {
	if c.fallback != nil && c.given["WithFailureMode"] && c.failure != FailLocal {
		return fmt.Errorf("ratelimit: WithFallback and WithFailureMode(%s) contradict each other: WithFallback selects FailLocal", c.failure)
	}
	if c.fallback != nil {
		c.failure = FailLocal
	}
	if c.failure == FailLocal && c.fallback == nil {
		return errors.New("ratelimit: WithFailureMode(FailLocal) needs a fallback store: use WithFallback")
	}
	return c.checkResolver()
}

// checkResolver reports the resolver's options given without a resolver
// and completes the resolver's defaults.
func (c *config) checkResolver() error {
	for _, name := range []string{"WithTierStale", "WithTierTimeout", "WithTierKeyIdentity"} {
		if c.given[name] && c.resolver.resolve == nil {
			return fmt.Errorf("ratelimit: %s needs WithTierResolver: there is no tier resolver", name)
		}
	}
	if !c.given["WithTierStale"] {
		c.resolver.stale = DefaultTierStale
	}
	if !c.given["WithTierTimeout"] {
		c.resolver.timeout = c.timeout
	}
	return nil
}

// Defaults of [NewLimiter].
const (
	DefaultPrefix        = "rl"
	DefaultTierName      = "default"
	defaultTierCacheTTL  = time.Minute
	defaultTierCacheSize = 10_000
	// DefaultTimeout bounds every store call: a rate limiter must not make
	// a slow cache the API's latency.
	DefaultTimeout = 50 * time.Millisecond
	// DefaultTierStale is how long a limiter keeps applying the last
	// tier its resolver named for a key, past the answer's cache TTL, while
	// the resolver fails ([WithTierStale]). An hour rides out the outages of
	// a plan database that a person fixes (a failover, a bad deploy) without
	// putting paying customers on the default tier; a plan that changed
	// meanwhile is applied when the resolver answers again. It costs
	// nothing while the resolver works.
	DefaultTierStale = time.Hour
	// DefaultDenyCacheSize is how many denied clients a limiter remembers
	// by default ([WithDenyCache]): an entry is about 300 bytes plus the
	// Result's decisions, so 10,000 blocked clients cost a few MiB.
	DefaultDenyCacheSize = 10_000
)

// WithLimits sets the limits of the tier named "default", the tier every
// client gets when there is no other: the usual single-tier set-up.
func WithLimits(limits ...Limit) Option {
	return WithTier(DefaultTierName, limits...)
}

// WithTier adds the tier name with its limits. The first tier added is the
// default tier unless [WithDefaultTier] says otherwise.
func WithTier(name string, limits ...Limit) Option {
	return func(c *config) error {
		c.tiers = append(c.tiers, Tier{Name: name, Limits: limits})
		return nil
	}
}

// WithTiers adds several tiers; see [WithTier].
func WithTiers(tiers ...Tier) Option {
	return func(c *config) error {
		c.tiers = append(c.tiers, tiers...)
		return nil
	}
}

// WithDefaultTier names the tier applied when a request names none, the
// resolver fails or returns an unknown tier.
func WithDefaultTier(name string) Option {
	return func(c *config) error {
		if err := once(c.given, "WithDefaultTier"); err != nil {
			return err
		}
		c.defaultTier = name
		return nil
	}
}

// WithPrefix sets the first segment of every store key (default "rl").
// Changing it starts every client from a full quota.
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if err := once(c.given, "WithPrefix"); err != nil {
			return err
		}
		if err := validatePrefix(prefix); err != nil {
			return err
		}
		c.prefix = prefix
		return nil
	}
}

// WithTierResolver makes the limiter ask resolve for the tier of requests
// that name none, by their lookup key ([Request.TierKey], else the
// Identity; the middleware's httplimit.WithTierKey). Answers are cached by a hash
// of the key for ttl (default 1 minute when zero): a plan change reaches
// the limiter within ttl. Errors are not cached.
//
// The cache holds at most size answers naming a tier other than the default
// (a customer's plan), and at most size more of the default tier or ""
// (default 10,000 when zero): resolve should answer "" (or the default
// tier's name) for a key it does not know, so that a flood of invented keys
// never evicts a customer's plan. Concurrent requests missing the same key
// share one call of resolve.
//
// The resolver runs on the request path, so its time is bounded: it gets a
// context with a deadline ([WithTierTimeout], default the limiter's
// [WithTimeout]), in a goroutine of its own that ends when it returns, and
// a request waits for it no longer than that deadline, even when resolve
// ignores its context. When resolve fails or runs out of time, the request
// keeps the last tier resolve named for its key for up to [WithTierStale]
// (default [DefaultTierStale]) past that answer's ttl, else gets the
// default tier; either way [Result.TierErr] says why, and the observers
// count and log it ([SlogObserver], also the default failure log).
//
// A client the deny cache holds is answered before its key is resolved:
// inventing keys while denied stays denied, and costs the resolver 8
// calls, then at most one a second (see [WithDenyCache]).
func WithTierResolver(resolve TierResolver, ttl time.Duration, size int) Option {
	return func(c *config) error {
		if err := once(c.given, "WithTierResolver"); err != nil {
			return err
		}
		switch {
		case resolve == nil:
			return fmt.Errorf("ratelimit: tier resolver must not be nil")
		case ttl < 0:
			return fmt.Errorf("ratelimit: tier resolver ttl must not be negative, got %s", ttl)
		case size < 0:
			return fmt.Errorf("ratelimit: tier resolver size must not be negative, got %d", size)
		}
		if ttl == 0 {
			ttl = defaultTierCacheTTL
		}
		if size == 0 {
			size = defaultTierCacheSize
		}
		c.resolver.resolve, c.resolver.ttl, c.resolver.size = resolve, ttl, size
		return nil
	}
}

// tierConfig is the configuration of the tier resolver and its cache.
type tierConfig struct {
	resolve TierResolver
	ttl     time.Duration
	size    int
	stale   time.Duration
	timeout time.Duration
}

// WithTierKeyIdentity makes a request whose [Request.TierKey] the
// resolver knows (answers a tier name, not "") a client of its own: its
// Identity becomes "key:" and a hash of the TierKey, the identity
// keyfunc.Header gives the same key (so `ratelimit inspect` finds it).
// A request without a TierKey, or with one the resolver answers "" for (an
// unknown or invented key), keeps its Identity (the client's address, say)
// and gets the default tier. That is the safe way to limit by API key:
// each known key has its own quota, keys behind one address do not share
// it, and inventing keys mints no quota; a client denied by its address
// that sends invented keys costs the resolver 8 calls, then one a second
// ([WithTierResolver]). The resolver must answer "" for a key it does not
// know: a tier name, even the default one, makes the key its own client.
// It needs [WithTierResolver].
func WithTierKeyIdentity() Option {
	return func(c *config) error {
		if err := once(c.given, "WithTierKeyIdentity"); err != nil {
			return err
		}
		c.keyIdent = true
		return nil
	}
}

// WithTierStale sets how long past an answer's cache TTL the limiter keeps
// the last tier its resolver named for a key while the resolver fails
// (default [DefaultTierStale]; 0 keeps none: a failure applies the default
// tier). It needs [WithTierResolver].
func WithTierStale(d time.Duration) Option {
	return func(c *config) error {
		if err := once(c.given, "WithTierStale"); err != nil {
			return err
		}
		if d < 0 {
			return fmt.Errorf("ratelimit: WithTierStale: window must not be negative, got %s", d)
		}
		c.resolver.stale = d
		return nil
	}
}

// WithTierTimeout bounds the time a request waits for the tier resolver
// (default the limiter's [WithTimeout]); the resolver's context has that
// deadline too. A resolver that does not answer in time counts as failed
// (see [WithTierResolver]). It needs [WithTierResolver].
func WithTierTimeout(d time.Duration) Option {
	return func(c *config) error {
		if err := once(c.given, "WithTierTimeout"); err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("ratelimit: WithTierTimeout: timeout must be positive, got %s", d)
		}
		c.resolver.timeout = d
		return nil
	}
}

// WithFailureMode sets what the limiter answers when the store fails
// (default [FailOpen]).
func WithFailureMode(m FailureMode) Option {
	return func(c *config) error {
		if err := once(c.given, "WithFailureMode"); err != nil {
			return err
		}
		if m > FailLocal {
			return fmt.Errorf("ratelimit: unknown failure mode %d", m)
		}
		c.failure = m
		return nil
	}
}

// WithTimeout bounds every store call (default [DefaultTimeout]). The store
// must honour context deadlines: see core/redisstore for the go-redis
// settings that make it do so.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if err := once(c.given, "WithTimeout"); err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("ratelimit: timeout must be positive, got %s", d)
		}
		c.timeout = d
		return nil
	}
}

// WithBreaker tunes the circuit breaker in front of the store, on by
// default with the zero config's defaults for every store that may block
// (a NonBlocking store, such as core/memstore, needs none): after
// cfg.Failures consecutive failures that say the store is unavailable
// (errors wrapping [ErrStoreUnavailable], timeouts), calls fail at once
// with no store call for cfg.OpenFor, then one probe decides. Without it, a
// frozen Redis makes every request wait out the timeout. A sharded store
// (core/redisstore on a Redis Cluster; see [Capabilities]) gets one breaker per shard: a dead
// master fails fast for its own clients only. [WithoutBreaker] turns it
// off; giving both is an error.
func WithBreaker(cfg BreakerConfig) Option {
	return func(c *config) error {
		if err := once(c.given, "WithBreaker"); err != nil {
			return err
		}
		cfg, err := cfg.withDefaults()
		if err != nil {
			return err
		}
		if c.noBreaker {
			return errors.New("ratelimit: WithBreaker and WithoutBreaker contradict each other")
		}
		c.breaker = &cfg
		return nil
	}
}

// WithoutBreaker turns the circuit breaker off ([WithBreaker]): every
// request then asks the store, and waits out the timeout while it is down.
func WithoutBreaker() Option {
	return func(c *config) error {
		if c.breaker != nil {
			return errors.New("ratelimit: WithBreaker and WithoutBreaker contradict each other")
		}
		c.noBreaker = true
		return nil
	}
}

// WithDenyCache sizes the deny cache, on by default with
// [DefaultDenyCacheSize] entries; size 0 turns it off. The deny cache keeps
// denied clients denied locally until their RetryAfter, with no store call.
// A denied take changes no state, so this is exact for this node; under a
// flood from one blocked client the store sees at most one call per
// RetryAfter per node.
//
// A denial held by a node outlives what resets it elsewhere: after
// `ratelimit reset` or a raised limit, a client this node denied stays
// denied here until that denial's RetryAfter (at most the longest wait of
// its limits), then asks the store again. A tier change is not held back:
// a denial answers only requests of the tier it was made in, and the tier
// resolver's answer expires after its TTL ([WithTierResolver]), so a
// client whose plan changed gets the new tier within that TTL. Before its
// tier is resolved, a request of a denied client whose lookup key has no
// cached answer is answered from the denial: inventing keys costs the
// resolver 8 calls per denied client, then at most one a second.
func WithDenyCache(size int) Option {
	return func(c *config) error {
		if err := once(c.given, "WithDenyCache"); err != nil {
			return err
		}
		if size < 0 {
			return fmt.Errorf("ratelimit: deny cache size must not be negative, got %d", size)
		}
		c.denyCache = size
		return nil
	}
}

// WithFallback sets the store used by [FailLocal] and selects that mode;
// with [WithFailureMode] of another mode it is an error.
// Each limit's Rate and Burst are divided by nodes (the number of app nodes
// sharing the primary store, at least 1), rounded up, so the fleet as a
// whole stays near the configured limits while the primary is down.
//
// The fallback decides with its own clock; the limiter's deny cache,
// tier cache and breaker follow the primary store's ([Capabilities].Clock). A test
// with a fake clock gives it to both stores. Fallback decisions are
// degraded and never enter the deny cache, so the two clocks never meet.
func WithFallback(local Store, nodes int) Option {
	return func(c *config) error {
		if err := once(c.given, "WithFallback"); err != nil {
			return err
		}
		if local == nil {
			return fmt.Errorf("ratelimit: fallback store must not be nil")
		}
		if nodes < 1 {
			return fmt.Errorf("ratelimit: fallback nodes must be at least 1, got %d", nodes)
		}
		c.fallback, c.nodes = local, nodes
		return nil
	}
}

// WithObserver adds an observer of decisions and breaker changes.
func WithObserver(o Observer) Option {
	return func(c *config) error {
		if o == nil {
			return fmt.Errorf("ratelimit: observer must not be nil")
		}
		c.observers = append(c.observers, o)
		return nil
	}
}

// WithShadow turns on shadow (dry-run) mode: limits are evaluated and
// observed as usual, but every request is admitted; a request the limits
// denied has Result.Shadowed set. Use it to roll out new limits safely.
func WithShadow() Option {
	return func(c *config) error {
		c.shadow = true
		return nil
	}
}
