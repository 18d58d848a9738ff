package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/internal/pgtest"
)

// cliTable is this test binary's table (pgtest: one per package).
const cliTable = "cli_test"

// TestPostgresAuditInspectReset runs audit, inspect and reset with
// --postgres on the test server, on the state a limiter left: rows per
// limit, the busiest client, the peeked quota, the deletion of one
// client's rows and nobody else's.
func TestPostgresAuditInspectReset(t *testing.T) {
	db := pgtest.Pool(t, 4)
	store, err := pgstore.New(context.Background(), db, pgstore.WithSchema(pgtest.Schema), pgstore.WithTable(cliTable), pgstore.WithSweep(0, 1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	prefix := fmt.Sprintf("cli%016x", rand.Uint64())
	limits := []core.Limit{core.PerMinute(10).WithName("per-minute"), core.PerDay(100).WithName("daily").WithAlgorithm(core.FixedWindow)}
	lim, err := core.NewLimiter(store, core.WithLimits(limits...), core.WithPrefix(prefix), core.WithTimeout(5*time.Second))
	require.NoError(t, err)
	for range 3 {
		_, err := lim.Allow(context.Background(), "alice")
		require.NoError(t, err)
	}
	_, err = lim.Allow(context.Background(), "bob")
	require.NoError(t, err)
	conn := []string{"--postgres", "env", "--pg-schema", pgtest.Schema, "--pg-table", cliTable, "--prefix", prefix}
	vars := map[string]string{"DATABASE_URL": pgtest.URL()}

	code, out, errOut := cliEnv(t, vars, append([]string{"audit", "--top", "1"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, errOut, "table "+pgtest.Schema+"."+cliTable, "the server line")
	assert.Contains(t, out, "4 rows, 2 clients")
	assert.Regexp(t, prefix+`\s+per-minute\s+g\s+2\s+0\s+\d+`, out, "the GCRA rows")
	assert.Regexp(t, prefix+`\s+daily\s+f\s+2\s+0\s+\d+`, out, "the fixed window rows")
	assert.Contains(t, out, "busiest clients (most rows):\n  2\t"+prefix+":{alice}")

	code, out, errOut = cliEnv(t, vars, append([]string{"inspect", "alice", "--limit", "per-minute=10/1m", "--limit", "daily=100/1d,alg=fixed_window"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `per-minute\s+gcra\s+.*\s7/10\s`, out, "alice's per-minute quota after 3 requests")
	assert.Regexp(t, `daily\s+fixed_window\s+.*\s97/100\s`, out, "alice's daily quota after 3 requests")

	code, out, errOut = cliEnv(t, vars, append([]string{"inspect", "alice"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, prefix+":{alice}:daily:f")
	assert.Contains(t, out, "n=3", "the fixed window's count")

	code, out, errOut = cliEnv(t, vars, append([]string{"reset", "alice"}, conn...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "2 rows deleted")
	code, out, _ = cliEnv(t, vars, append([]string{"audit"}, conn...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "2 rows, 1 clients", "bob's rows are left")
	assert.False(t, strings.Contains(out, "{alice}"))

	code, _, errOut = cliEnv(t, vars, "audit", "--postgres", "env", "--pg-schema", pgtest.Schema, "--pg-table", "no_such_table")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "no such table")
}

// TestPGSchemaPrintsTheMigration checks that pg-schema prints the SQL of
// the store's schema for the names given, and refuses a bad one.
func TestPGSchemaPrintsTheMigration(t *testing.T) {
	code, out, _ := cli(t, "pg-schema", "--pg-schema", "limits", "--pg-table", "api", "--unlogged")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `CREATE UNLOGGED TABLE IF NOT EXISTS "limits"."api"`)
	assert.Contains(t, out, `CREATE OR REPLACE FUNCTION "limits"."api_take"(`)
	code, _, errOut := cli(t, "pg-schema", "--pg-table", "Api")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, `WithTable: name "Api" has byte 'A' at 0`)
}
