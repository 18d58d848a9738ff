package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
)

// Defaults of the connection flags.
const (
	defaultRedisURL    = "redis://localhost:6379"
	defaultDialTimeout = 2 * time.Second
	defaultTimeout     = 5 * time.Second
)

const (
	redisURLHelp    = "want redis://[user:password@]host[:port][/db], rediss://... (TLS) or unix:///path/to/socket"
	clusterHelp     = "want host:port,host:port,... or redis://[user:password@]host:port?addr=host2:port2"
	sentinelURLHelp = "want host:port,host:port,... or redis://[user:password@]host:port?master_name=NAME&addr=host2:port2"
)

// connFlags are the connection flags every command shares.
type connFlags struct {
	redisURL    string
	cluster     string
	sentinel    string
	master      string
	prefix      string
	dialTimeout time.Duration
	timeout     time.Duration
	pg          pgFlags // --postgres: the PostgreSQL store instead of Redis
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.redisURL, "redis", "", "standalone server `URL` (default $"+envRedisURL+", else "+defaultRedisURL+")")
	fs.StringVar(&c.cluster, "cluster", "", "Redis Cluster seed `addresses` (host:port,...) or a cluster URL")
	fs.StringVar(&c.sentinel, "sentinel", "", "Sentinel `addresses` (host:port,...) or a failover URL")
	fs.StringVar(&c.master, "sentinel-master", "", "`name` of the master the sentinels watch")
	fs.StringVar(&c.prefix, "prefix", core.DefaultPrefix, "key `prefix` of the limiter; audit also covers its sub-prefixes (P:<sub>)")
	fs.DurationVar(&c.dialTimeout, "dial-timeout", defaultDialTimeout, "connect `timeout`")
	fs.DurationVar(&c.timeout, "timeout", defaultTimeout, "per-command read and write `timeout`")
	c.pg.register(fs)
}

// A target is a connected Redis deployment and the key prefix to work on.
type target struct {
	client redis.UniversalClient
	desc   string // "standalone 127.0.0.1:6379", for messages
	server string // "redis standalone 127.0.0.1:6379 db 0", the first line of every command
	prefix string
	keys   core.KeyBuilder
}

// A deployment is the client the flags describe, not yet connected.
type deployment struct {
	client redis.UniversalClient
	desc   string // for error messages
	server string // the server line; empty for a cluster until its masters are known
}

// envRedisURL names the environment variable read when no connection flag
// is given: the variable the reference API (examples/refapi) reads.
const envRedisURL = "REDIS_URL"

// An origin says where the standalone URL came from.
type origin int

const (
	fromFlag    origin = iota // --redis
	fromEnv                   // $REDIS_URL
	fromDefault               // neither: defaultRedisURL
)

// source names the origin in error messages about the URL.
func (o origin) source() string {
	switch o {
	case fromEnv:
		return "$" + envRedisURL
	case fromDefault:
		return "the default URL"
	}
	return "--redis"
}

// note says where the address came from, for the server line and
// connection errors: an address nobody chose must say so. It is empty for
// --redis.
func (o origin) note() string {
	switch o {
	case fromEnv:
		return "from $" + envRedisURL
	case fromDefault:
		return "the default address: no --redis, --cluster, --sentinel or $" + envRedisURL + " given"
	}
	return ""
}

// open validates the flags, connects, checks the connection with PING and
// prints the server line on stderr. Errors are meant for the operator: no
// stack traces, no passwords.
func (c *connFlags) open(ctx context.Context, e env) (*target, error) {
	kb, err := core.NewKeyBuilder(c.prefix)
	if err != nil {
		return nil, fmt.Errorf("%w (--prefix)", err)
	}
	d, err := c.deployment(e.getenv)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, c.dialTimeout+c.timeout)
	defer cancel()
	if err := d.client.Ping(pctx).Err(); err != nil {
		_ = d.client.Close()
		return nil, fmt.Errorf("ratelimit: cannot reach Redis (%s): %w", d.desc, err)
	}
	if cc, ok := d.client.(*redis.ClusterClient); ok {
		masters, err := clusterMasters(pctx, cc)
		if err != nil {
			_ = d.client.Close()
			return nil, fmt.Errorf("ratelimit: cannot reach Redis (%s): %w", d.desc, err)
		}
		d.server = fmt.Sprintf("redis cluster %d masters: %s", len(masters), strings.Join(masters, ","))
	}
	fmt.Fprintln(e.stderr, d.server)
	return &target{client: d.client, desc: d.desc, server: d.server, prefix: c.prefix, keys: kb}, nil
}

// clusterMasters returns the addresses of the masters of a Cluster, sorted.
func clusterMasters(ctx context.Context, cc *redis.ClusterClient) ([]string, error) {
	var mu sync.Mutex
	var addrs []string
	err := cc.ForEachMaster(ctx, func(_ context.Context, node *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		addrs = append(addrs, node.Options().Addr)
		return nil
	})
	slices.Sort(addrs)
	return addrs, err
}

// deployment builds the client the flags (or $REDIS_URL) describe, without
// connecting.
func (c *connFlags) deployment(getenv func(string) string) (deployment, error) {
	set := 0
	for _, v := range []string{c.redisURL, c.cluster, c.sentinel} {
		if v != "" {
			set++
		}
	}
	switch {
	case set > 1:
		return deployment{}, errors.New("ratelimit: use only one of --redis, --cluster and --sentinel")
	case c.master != "" && c.sentinel == "":
		return deployment{}, errors.New("ratelimit: --sentinel-master needs --sentinel")
	case c.dialTimeout <= 0 || c.timeout <= 0:
		return deployment{}, errors.New("ratelimit: --dial-timeout and --timeout must be positive")
	case c.cluster != "":
		return c.clusterClient()
	case c.sentinel != "":
		return c.sentinelClient()
	case c.redisURL != "":
		return c.standaloneClient(c.redisURL, fromFlag)
	}
	if raw := getenv(envRedisURL); raw != "" {
		return c.standaloneClient(raw, fromEnv)
	}
	return c.standaloneClient(defaultRedisURL, fromDefault)
}

// standaloneClient builds the client of the URL raw, which came from o.
func (c *connFlags) standaloneClient(raw string, o origin) (deployment, error) {
	shown, err := redactURL(raw)
	if err != nil {
		return deployment{}, fmt.Errorf("ratelimit: %s: %w; %s", o.source(), err, redisURLHelp)
	}
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return deployment{}, fmt.Errorf("ratelimit: %s %s: %w; %s", o.source(), shown, err, redisURLHelp)
	}
	c.tune(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.MaxRetries, &opts.DialerRetries, &opts.ContextTimeoutEnabled)
	addr := opts.Addr
	if opts.Network == "unix" {
		addr = "unix:" + addr
	}
	d := deployment{
		client: redis.NewClient(opts),
		desc:   "standalone " + addr,
		server: fmt.Sprintf("redis standalone %s db %d%s", addr, opts.DB, tlsNote(opts.TLSConfig != nil)),
	}
	if note := o.note(); note != "" {
		d.desc += ", " + note
		d.server += " (" + note + ")"
	}
	return d, nil
}

func (c *connFlags) clusterClient() (deployment, error) {
	var opts *redis.ClusterOptions
	if strings.Contains(c.cluster, "://") {
		shown, err := redactURL(c.cluster)
		if err != nil {
			return deployment{}, fmt.Errorf("ratelimit: --cluster: %w; %s", err, clusterHelp)
		}
		if opts, err = redis.ParseClusterURL(c.cluster); err != nil {
			return deployment{}, fmt.Errorf("ratelimit: --cluster %s: %w; %s", shown, err, clusterHelp)
		}
	} else {
		addrs, err := splitAddrs(c.cluster)
		if err != nil {
			return deployment{}, fmt.Errorf("ratelimit: --cluster: %w; %s", err, clusterHelp)
		}
		opts = &redis.ClusterOptions{Addrs: addrs}
	}
	c.tune(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.MaxRetries, &opts.DialerRetries, &opts.ContextTimeoutEnabled)
	return deployment{client: redis.NewClusterClient(opts), desc: "cluster " + strings.Join(opts.Addrs, ",")}, nil
}

func (c *connFlags) sentinelClient() (deployment, error) {
	var opts *redis.FailoverOptions
	if strings.Contains(c.sentinel, "://") {
		shown, err := redactURL(c.sentinel)
		if err != nil {
			return deployment{}, fmt.Errorf("ratelimit: --sentinel: %w; %s", err, sentinelURLHelp)
		}
		if opts, err = redis.ParseFailoverURL(c.sentinel); err != nil {
			return deployment{}, fmt.Errorf("ratelimit: --sentinel %s: %w; %s", shown, err, sentinelURLHelp)
		}
	} else {
		addrs, err := splitAddrs(c.sentinel)
		if err != nil {
			return deployment{}, fmt.Errorf("ratelimit: --sentinel: %w; %s", err, sentinelURLHelp)
		}
		opts = &redis.FailoverOptions{SentinelAddrs: addrs}
	}
	if c.master != "" {
		opts.MasterName = c.master
	}
	if opts.MasterName == "" {
		return deployment{}, errors.New("ratelimit: --sentinel needs the master's name: --sentinel-master NAME (or master_name= in the URL)")
	}
	c.tune(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.MaxRetries, &opts.DialerRetries, &opts.ContextTimeoutEnabled)
	via := strings.Join(opts.SentinelAddrs, ",")
	return deployment{
		client: redis.NewFailoverClient(opts),
		desc:   fmt.Sprintf("sentinel master %q via %s", opts.MasterName, via),
		server: fmt.Sprintf("redis sentinel master %s via %s db %d%s", opts.MasterName, via, opts.DB, tlsNote(opts.TLSConfig != nil)),
	}, nil
}

func tlsNote(tls bool) string {
	if tls {
		return " tls"
	}
	return ""
}

// redactURL returns raw with its password hidden, for messages. It does not
// quote raw when it cannot parse it: the text may hold a password.
func redactURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("not a valid URL")
	}
	return u.Redacted(), nil
}

// splitAddrs splits a comma-separated list of host:port addresses.
func splitAddrs(list string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("%q is not host:port", a)
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// tune applies the timeout flags to client options a URL left unset, makes
// context deadlines cut reads short, and retries a failed command or dial
// only once unless the URL says otherwise: an operator at a terminal wants a
// quick answer, not five dial attempts to a server that is down.
func (c *connFlags) tune(dial, read, write *time.Duration, retries, dialRetries *int, contextTimeout *bool) {
	if *dial == 0 {
		*dial = c.dialTimeout
	}
	if *read == 0 {
		*read = c.timeout
	}
	if *write == 0 {
		*write = c.timeout
	}
	if *retries == 0 {
		*retries = 1
	}
	if *dialRetries == 0 {
		*dialRetries = 1
	}
	*contextTimeout = true
}

func (t *target) Close() error { return t.client.Close() }

// forEachNode calls fn for every node that holds keys: each master of a
// Cluster (concurrently: fn must be safe for that), or the one server.
func (t *target) forEachNode(ctx context.Context, fn func(ctx context.Context, node *redis.Client) error) error {
	switch c := t.client.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("ratelimit: unsupported client %T", t.client)
}

// nodeFor returns the node that holds key: its master on a Cluster, or the
// one server.
func (t *target) nodeFor(ctx context.Context, key string) (*redis.Client, error) {
	switch c := t.client.(type) {
	case *redis.ClusterClient:
		return c.MasterForKey(ctx, key)
	case *redis.Client:
		return c, nil
	}
	return nil, fmt.Errorf("ratelimit: unsupported client %T", t.client)
}
