// Package pgtest connects tests to a real PostgreSQL server: the one at
// 127.0.0.1:5432 (trust authentication, database test), which `make test`
// starts or installs where it is missing (scripts/ensure-postgres.sh), or
// the one the URL in $RATELIMIT_TEST_DATABASE_URL names. Never a mock.
//
// A test that needs the server and cannot reach it fails with how to
// provide one; only go test -short skips it. Each test package keeps its
// state in a table of its own, in the schema [Schema], so packages tested
// in parallel never see each other's rows, and each test in keys of its
// own prefix.
package pgtest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL names the variable that points the tests at another server.
const EnvURL = "RATELIMIT_TEST_DATABASE_URL"

// DefaultURL is the server the tests use when EnvURL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Schema is the schema every test table lives in.
const Schema = "ratelimit_test"

// URL returns the URL of the test server.
func URL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// Pool returns a pool on the test server, closed when t ends, with room
// for maxConns connections (0: pgx's default). It fails t, saying how to
// provide a server, when none answers within 5 seconds; under -short it
// skips t.
func Pool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	if testing.Short() {
		t.Skip("pgtest: -short: skipping a test that needs PostgreSQL")
	}
	cfg, err := pgxpool.ParseConfig(URL())
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvURL, err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if pool != nil {
			pool.Close()
		}
		t.Fatalf("pgtest: no PostgreSQL at %s: %v\n"+
			"  `make test` starts one (scripts/ensure-postgres.sh); or set %s to a postgres:// URL of a\n"+
			"  server and database the tests may create the schema %q in; go test -short skips these tests",
			cfg.ConnConfig.Host, err, EnvURL, Schema)
	}
	t.Cleanup(pool.Close)
	return pool
}
