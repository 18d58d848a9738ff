package refapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

// OpenStore returns the store the environment (getenv) names, its
// description for the start-up log and a function that closes its client:
// REDIS_URL (redis://127.0.0.1:6379/0), REDIS_CLUSTER_ADDRS (comma-separated
// seeds) or REDIS_SENTINEL_ADDRS with REDIS_SENTINEL_MASTER, else the memory
// store, right for one instance only. Two of them set, or one set but
// listing no address, is an error naming the variable. Redis unreachable is
// a warning on logger, not an error: the limiters serve through a Redis
// outage, so starting during one is no different.
func OpenStore(ctx context.Context, getenv func(string) string, logger *slog.Logger) (core.Store, string, func() error, error) {
	client, desc, err := redisClient(getenv)
	if err != nil {
		return nil, "", nil, err
	}
	if client == nil {
		s, err := memstore.New()
		return s, "memory store", func() error { return nil }, err
	}
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

// redisClient returns the client the environment names and its
// description, or a nil client when it names none. The redisstore
// constructors keep each call within the limiter's timeout: deadlines
// honoured, no retried (so double-charged) script.
func redisClient(getenv func(string) string) (redis.UniversalClient, string, error) {
	var set []string
	for _, name := range []string{"REDIS_URL", "REDIS_CLUSTER_ADDRS", "REDIS_SENTINEL_ADDRS"} {
		if getenv(name) != "" {
			set = append(set, name)
		}
	}
	cluster, clusterErr := addrs(getenv, "REDIS_CLUSTER_ADDRS")
	sentinels, sentinelErr := addrs(getenv, "REDIS_SENTINEL_ADDRS")
	master := getenv("REDIS_SENTINEL_MASTER")
	switch {
	case len(set) > 1:
		return nil, "", fmt.Errorf("%s contradict each other: set one", strings.Join(set, " and "))
	case clusterErr != nil || sentinelErr != nil:
		return nil, "", errors.Join(clusterErr, sentinelErr)
	case (len(sentinels) > 0) != (master != ""):
		return nil, "", errors.New("REDIS_SENTINEL_ADDRS and REDIS_SENTINEL_MASTER go together")
	case len(cluster) > 0:
		client := redisstore.NewClusterClient(&redis.ClusterOptions{Addrs: cluster})
		return client, "redis cluster " + strings.Join(cluster, ","), nil
	case len(sentinels) > 0:
		client := redisstore.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: sentinels})
		return client, fmt.Sprintf("redis sentinel master %s via %s", master, strings.Join(sentinels, ",")), nil
	case getenv("REDIS_URL") != "":
		opts, err := redis.ParseURL(getenv("REDIS_URL"))
		if err != nil {
			return nil, "", fmt.Errorf("REDIS_URL: %w", err)
		}
		return redisstore.NewClient(opts), "redis " + opts.Addr, nil
	}
	return nil, "", nil
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
