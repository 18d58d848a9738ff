package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/internal/pgtest"
)

// testTable is this test binary's table (pgtest: one per package).
const testTable = "pgstore_test"

// schemaOnce creates the test table once per test binary; the stores of
// the tests then skip the migration (WithoutMigration), which would
// replace the functions under the other tests' connections.
var schemaOnce sync.Once

// testOpts are the options of every test store: the test table, no
// periodic sweep.
func testOpts(opts ...pgstore.Option) []pgstore.Option {
	return append([]pgstore.Option{pgstore.WithSchema(pgtest.Schema), pgstore.WithTable(testTable),
		pgstore.WithoutMigration(), pgstore.WithSweep(0, 1)}, opts...)
}

// testPool returns a pool on the test server with the test table in place.
func testPool(t testing.TB, maxConns int32) *pgxpool.Pool {
	t.Helper()
	pool := pgtest.Pool(t, maxConns)
	var err error
	schemaOnce.Do(func() {
		var s *pgstore.Store
		s, err = pgstore.New(context.Background(), pool, pgstore.WithSchema(pgtest.Schema), pgstore.WithTable(testTable), pgstore.WithSweep(0, 1))
		if err == nil {
			err = s.Close()
		}
	})
	require.NoError(t, err, "create the test table")
	return pool
}

// sharedPool is one pool for the suites that build hundreds of stores.
var sharedPool struct {
	sync.Mutex
	pool *pgxpool.Pool
}

// pool returns a pool shared by every test of the binary, opened by the
// first and closed when the binary ends (TestMain).
func pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	sharedPool.Lock()
	defer sharedPool.Unlock()
	if sharedPool.pool == nil {
		p := testPool(t, 16)
		// testPool closes p when t ends; keep a pool of our own instead.
		cfg := p.Config()
		own, err := pgxpool.NewWithConfig(context.Background(), cfg)
		require.NoError(t, err)
		sharedPool.pool = own
	}
	return sharedPool.pool
}

// newTestStore returns a store on the shared pool with the clock now.
func newTestStore(t testing.TB, now func() time.Time, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s, err := pgstore.New(context.Background(), pool(t), testOpts(append([]pgstore.Option{pgstore.WithClock(now)}, opts...)...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}
