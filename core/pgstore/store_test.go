package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/pgtest"
)

// TestNewRejectsBadNames checks that the schema and table names, which
// become SQL identifiers, are validated at construction, naming the
// option, before any statement is sent.
func TestNewRejectsBadNames(t *testing.T) {
	tests := []struct {
		name string
		opt  pgstore.Option
		want string
	}{
		{"empty table", pgstore.WithTable(""), "WithTable: name must not be empty"},
		{"upper case", pgstore.WithTable("State"), `WithTable: name "State" has byte 'S' at 0`},
		{"SQL in the name", pgstore.WithSchema(`x"; drop table t; --`), `WithSchema: name "x\"; drop table t; --" has byte '"' at 1`},
		{"leading digit", pgstore.WithSchema("1st"), "starts with a digit"},
		{"too long", pgstore.WithTable(strings.Repeat("a", 49)), "longer than 48 bytes"},
		{"negative sweep", pgstore.WithSweep(-time.Second, 10), "WithSweep"},
		{"empty sweep batch", pgstore.WithSweep(time.Second, 0), "WithSweep"},
		{"nil clock", pgstore.WithClock(nil), "WithClock: clock must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A DB that fails the test if New sends anything.
			_, err := pgstore.New(context.Background(), refusingDB{t}, tt.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("WithUnlogged and WithoutMigration", func(t *testing.T) {
		_, err := pgstore.New(context.Background(), refusingDB{t}, pgstore.WithUnlogged(), pgstore.WithoutMigration())
		require.ErrorContains(t, err, "WithUnlogged and WithoutMigration contradict each other")
	})
}

// refusingDB is a DB that fails the test on any statement.
type refusingDB struct{ t *testing.T }

func (d refusingDB) Exec(context.Context, string, ...any) (pgconn.CommandTag, error) {
	d.t.Fatal("a statement was sent")
	return pgconn.CommandTag{}, nil
}

func (d refusingDB) Query(context.Context, string, ...any) (pgx.Rows, error) {
	d.t.Fatal("a statement was sent")
	return nil, nil
}

func (d refusingDB) QueryRow(context.Context, string, ...any) pgx.Row {
	d.t.Fatal("a statement was sent")
	return nil
}

// TestRowsExpireAndSweep checks that every row a take writes carries its
// expiry, no later than the longest TTL the limits imply, and that Sweep
// deletes the rows once the clock passes it, and only then.
func TestRowsExpireAndSweep(t *testing.T) {
	clock := storetest.NewClock()
	s := newTestStore(t, clock.Now)
	cal, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	limits := []core.Limit{
		core.PerSecond(10), core.PerMinute(10).WithAlgorithm(core.TokenBucket),
		core.PerMinute(5).WithAlgorithm(core.FixedWindow), core.PerMinute(5).WithAlgorithm(core.SlidingWindow),
		core.PerMinute(5).WithAlgorithm(core.SlidingLog), core.PerCalendarDay(100, cal),
	}
	kb := storetest.UniqueKeyBuilder(t)
	keys := kb.AppendKeys(nil, "idle-client", limits)
	_, err = s.Take(context.Background(), nil, keys, limits, 1)
	require.NoError(t, err)

	db := pool(t)
	rows := func() map[string]time.Time {
		got := map[string]time.Time{}
		r, err := db.Query(context.Background(), `SELECT key, expire_at FROM `+pgtest.Schema+`.`+testTable+` WHERE key = ANY($1)`, keys)
		require.NoError(t, err)
		for r.Next() {
			var k string
			var exp int64
			require.NoError(t, r.Scan(&k, &exp))
			got[k] = time.Unix(1704067200, 0).Add(time.Duration(exp) * time.Microsecond).UTC()
		}
		require.NoError(t, r.Err())
		return got
	}
	expiries := rows()
	require.Len(t, expiries, len(keys), "one row per limit")
	longest := time.Time{}
	for _, k := range keys {
		exp := expiries[k]
		assert.True(t, exp.After(clock.Now()), "%s: expires after the take", k)
		assert.False(t, exp.After(clock.Now().Add(25*time.Hour)), "%s: expires within a calendar day", k)
		if exp.After(longest) {
			longest = exp
		}
	}

	n, err := s.Sweep(context.Background(), 1000)
	require.NoError(t, err)
	assert.Len(t, rows(), len(keys), "a sweep before the expiry deletes none of them (it deleted %d others)", n)
	clock.Set(longest.Add(time.Millisecond))
	for {
		n, err := s.Sweep(context.Background(), 1000)
		require.NoError(t, err)
		if n < 1000 {
			break
		}
	}
	assert.Empty(t, rows(), "a sweep after the expiry deletes every row")
}

// TestUnloggedTable checks that WithUnlogged creates an UNLOGGED table,
// in the schema and under the name asked for, and that it serves takes.
func TestUnloggedTable(t *testing.T) {
	db := pgtest.Pool(t, 2)
	const table = "pgstore_unlogged_test"
	t.Cleanup(func() {
		_, err := db.Exec(context.Background(), `DROP TABLE IF EXISTS `+pgtest.Schema+`.`+table+` CASCADE`)
		assert.NoError(t, err)
	})
	s, err := pgstore.New(context.Background(), db, pgstore.WithSchema(pgtest.Schema), pgstore.WithTable(table), pgstore.WithUnlogged())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	var persistence string
	require.NoError(t, db.QueryRow(context.Background(), `SELECT relpersistence FROM pg_class WHERE oid = $1::regclass`,
		pgtest.Schema+"."+table).Scan(&persistence))
	assert.Equal(t, "u", persistence, "relpersistence of the table")
	limits := []core.Limit{core.PerMinute(2)}
	keys := storetest.UniqueKeyBuilder(t).AppendKeys(nil, "c", limits)
	for want := int64(1); want >= 0; want-- {
		ds, err := s.Take(context.Background(), nil, keys, limits, 1)
		require.NoError(t, err)
		assert.Equal(t, want, ds[0].Remaining)
	}
}

// TestDatabaseClockDecides checks that, without WithClock, the database's
// clock picks the calendar window: an app clock three days ahead computes
// boundaries that miss the database's time, and the take fails with
// ErrCalendarSkew, charging nothing; with the app clock right, it passes.
func TestDatabaseClockDecides(t *testing.T) {
	ahead := func() time.Time { return time.Now().Add(72 * time.Hour) }
	s, err := pgstore.New(context.Background(), pool(t), testOpts(pgstore.WithAppClock(ahead))...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	limits := []core.Limit{core.PerCalendarDay(5, time.UTC)}
	keys := storetest.UniqueKeyBuilder(t).AppendKeys(nil, "c", limits)

	_, err = s.Take(context.Background(), nil, keys, limits, 1)
	require.ErrorIs(t, err, pgstore.ErrCalendarSkew)
	assert.NotErrorIs(t, err, core.ErrStoreUnavailable, "a clock that far off is a fault, not an outage")

	right, err := pgstore.New(context.Background(), pool(t), testOpts()...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = right.Close() })
	ds, err := right.Take(context.Background(), nil, keys, limits, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(4), ds[0].Remaining, "the failed take charged nothing")
}

// TestReadOnlyIsUnavailable checks that a take on a connection that
// became read-only (a failover left the pool on a standby) is
// core.ErrStoreUnavailable, so that the limiter's failure mode applies.
func TestReadOnlyIsUnavailable(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(pgtest.URL())
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	ro, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(ro.Close)
	pool(t) // the table exists
	s, err := pgstore.New(context.Background(), ro, testOpts()...)
	require.NoError(t, err)
	limits := []core.Limit{core.PerMinute(2)}
	keys := storetest.UniqueKeyBuilder(t).AppendKeys(nil, "c", limits)
	_, err = s.Take(context.Background(), nil, keys, limits, 1)
	require.ErrorIs(t, err, core.ErrStoreUnavailable)
	assert.Contains(t, err.Error(), "25006")
}

// TestDeadlineIsUnavailable checks that a take whose context ends is
// core.ErrStoreUnavailable and returns by then.
func TestDeadlineIsUnavailable(t *testing.T) {
	s := newTestStore(t, time.Now)
	limits := []core.Limit{core.PerMinute(2)}
	keys := storetest.UniqueKeyBuilder(t).AppendKeys(nil, "c", limits)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Take(ctx, nil, keys, limits, 1)
	require.ErrorIs(t, err, core.ErrStoreUnavailable)
	assert.True(t, errors.Is(err, context.Canceled))
}
