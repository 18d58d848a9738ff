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
	resolver    TierResolver
	cacheTTL    time.Duration
	cacheSize   int
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
// Identity; the middleware's [HTTPTierKey]). Answers are cached by a hash
// of the key for ttl in at most size entries (defaults 1 minute and 10,000
// when zero); errors are not cached.
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
		c.resolver, c.cacheTTL, c.cacheSize = resolve, ttl, size
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
// ([NonBlocking] stores, such as core/memstore, need none): after
// cfg.Failures consecutive failures that say the store is unavailable
// (errors wrapping [ErrStoreUnavailable], timeouts), calls fail at once
// with no store call for cfg.OpenFor, then one probe decides. Without it, a
// frozen Redis makes every request wait out the timeout. A [Sharded] store
// (core/redisstore on a Redis Cluster) gets one breaker per shard: a dead
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
// `ratelimit reset`, a tier change or a raised limit, a client this node
// denied stays denied here until that denial's RetryAfter (at most the
// longest wait of its limits), then asks the store again.
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
// tier cache and breaker follow the primary store's ([Clocked]). A test
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
