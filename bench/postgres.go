package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
)

// The PostgreSQL store runs on the server of $RATELIMIT_BENCH_DATABASE_URL,
// else the one `make bench` makes sure of (scripts/ensure-postgres.sh), in
// a table of its own.
const (
	envPostgresURL     = "RATELIMIT_BENCH_DATABASE_URL"
	defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	benchSchema        = "ratelimit_bench"
	benchTable         = "bench"
	// maxPoolConns caps each store's pool: three stores of a cell share a
	// server of max_connections 100, and a database's connection budget is
	// what an app has in production too; goroutines beyond it queue.
	maxPoolConns = 24
)

func postgresURL() string {
	if u := os.Getenv(envPostgresURL); u != "" {
		return u
	}
	return defaultPostgresURL
}

// oursPostgres is pgstore.Store.Take on alg: one call of the take
// function, one round trip, the database's clock.
func oursPostgres(alg core.Algorithm) contender {
	return contender{name: "pgstore " + alg.String(), ours: true, bound: algorithmBounds[alg],
		open: func(e env) (*instance, error) {
			cfg, err := pgxpool.ParseConfig(postgresURL())
			if err != nil {
				return nil, err
			}
			cfg.MaxConns = int32(min(e.pool, maxPoolConns))
			pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
			if err != nil {
				return nil, err
			}
			store, err := pgstore.New(context.Background(), pool,
				pgstore.WithSchema(benchSchema), pgstore.WithTable(benchTable), pgstore.WithSweep(0, 1))
			if err != nil {
				pool.Close()
				return nil, err
			}
			return storeInstance(e, store, alg, func() { _ = store.Close(); pool.Close() })
		}}
}

// postgresCPU returns the CPU time (user + system) of every process named
// postgres on this machine, from /proc: the database's cost of a run, when
// the server runs here. It returns false when /proc cannot tell.
func postgresCPU() (time.Duration, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	found := false
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != "postgres" {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
		k, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
		ticks += u + k
		found = true
	}
	return time.Duration(ticks) * 10 * time.Millisecond, found // USER_HZ = 100 on Linux
}
