package pgstore

import (
	"fmt"
	"time"
)

// An Option configures a [Store] in [New].
type Option func(*config) error

// Defaults of [New].
const (
	// DefaultSchema is the schema of the store's table and functions
	// ([WithSchema]).
	DefaultSchema = "ratelimit"
	// DefaultTable is the name of the store's table ([WithTable]); the
	// functions are named after it.
	DefaultTable = "state"
	// DefaultSweepEvery is how often a store deletes expired rows
	// ([WithSweep]).
	DefaultSweepEvery = time.Minute
	// DefaultSweepBatch is how many expired rows one statement of a sweep
	// deletes at most ([WithSweep]).
	DefaultSweepBatch = 1000
)

type config struct {
	schema, table string
	unlogged      bool
	sync          bool
	migrate       bool
	sweepEvery    time.Duration
	sweepBatch    int
	now           func() time.Time // [WithClock]
	appNow        func() time.Time // [WithAppClock]
}

func newConfig(opts []Option) (config, error) {
	c := config{schema: DefaultSchema, table: DefaultTable, migrate: true,
		sweepEvery: DefaultSweepEvery, sweepBatch: DefaultSweepBatch}
	for _, opt := range opts {
		if err := opt(&c); err != nil {
			return c, err
		}
	}
	if c.unlogged && !c.migrate {
		return c, fmt.Errorf("ratelimit: pgstore: WithUnlogged and WithoutMigration contradict each other: the table's kind is chosen when New creates it")
	}
	return c, nil
}

// WithSchema sets the schema of the store's table and functions (default
// [DefaultSchema]): lower-case letters, digits and '_', starting with a
// letter or '_', at most 48 bytes. [New] creates it if needed.
func WithSchema(name string) Option {
	return func(c *config) error {
		if err := validateIdent("WithSchema", name); err != nil {
			return err
		}
		c.schema = name
		return nil
	}
}

// WithTable sets the name of the store's table (default [DefaultTable]),
// with the syntax of [WithSchema]; the functions are named after it
// (<table>_take, <table>_release, <table>_renew, <table>_sweep). Two
// stores with different tables share no state.
func WithTable(name string) Option {
	return func(c *config) error {
		if err := validateIdent("WithTable", name); err != nil {
			return err
		}
		c.table = name
		return nil
	}
}

// WithUnlogged makes [New] create the table UNLOGGED: PostgreSQL writes no
// WAL for it, so a take costs less, but after a crash of the server (not
// a clean shutdown) the table comes back empty, every client with its full
// quota, and a standby has no copy of it, so a failover loses it too. It
// applies only when New creates the table; an existing table keeps its
// kind (ALTER TABLE ... SET LOGGED / UNLOGGED changes it).
func WithUnlogged() Option {
	return func(c *config) error { c.unlogged = true; return nil }
}

// WithSynchronousCommit makes a take that charges wait until its
// transaction is on disk. By default it commits asynchronously
// (synchronous_commit off, for its transaction only): it returns as soon as
// the database has applied it, about twice as fast on a disk that really
// syncs, and a crash of the server (not a clean shutdown, not a failover
// to a standby that had the WAL) may lose the takes of its last moments, at
// most three times wal_writer_delay (600 ms by default): those clients get
// that quota back, nothing else is lost or corrupted.
func WithSynchronousCommit() Option {
	return func(c *config) error { c.sync = true; return nil }
}

// WithoutMigration makes [New] check that the schema is in place instead
// of creating or updating it, for deployments where the app's database
// user may not run DDL: apply the SQL of [SchemaSQL] (or `ratelimit
// pg-schema`) with a migration tool first.
func WithoutMigration() Option {
	return func(c *config) error { c.migrate = false; return nil }
}

// WithSweep sets how often the store deletes expired rows, and how many
// one statement deletes at most (defaults [DefaultSweepEvery] and
// [DefaultSweepBatch]). every = 0 turns the sweep off: call [Store.Sweep]
// yourself then (from a cron job, say), or expired rows stay in the table,
// harmless to decisions (a take reads them as absent) but taking room.
func WithSweep(every time.Duration, batch int) Option {
	return func(c *config) error {
		if every < 0 || batch < 1 {
			return fmt.Errorf("ratelimit: pgstore: WithSweep: every must not be negative and batch must be at least 1, got %s and %d", every, batch)
		}
		c.sweepEvery, c.sweepBatch = every, batch
		return nil
	}
}

// WithClock makes the store send now() with every take instead of letting
// PostgreSQL read its own clock (clock_timestamp()); rows then expire on
// it too. It exists for tests, which need deterministic time
// (core/storetest); never use it in production, where app nodes with
// different clocks would disagree. A [core.Limiter] over the store times
// its deny cache, tier cache and breaker with it too ([Store.Capabilities]).
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("ratelimit: pgstore: WithClock: clock must not be nil")
		}
		c.now = now
		return nil
	}
}

// WithAppClock sets the app's clock, from which the store computes the
// calendar boundaries it sends with a take of a [core.CalendarWindow]
// limit (docs/algorithms.md, "Calendar windows"); the database's clock
// still picks the window. The default is the clock of [WithClock] when it
// is set, else time.Now. It exists for tests that put the app's clock off
// the database's.
func WithAppClock(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("ratelimit: pgstore: WithAppClock: clock must not be nil")
		}
		c.appNow = now
		return nil
	}
}

// appClock returns the clock of the calendar boundaries: [WithAppClock]'s,
// else [WithClock]'s, else time.Now.
func (c config) appClock() func() time.Time {
	switch {
	case c.appNow != nil:
		return c.appNow
	case c.now != nil:
		return c.now
	}
	return time.Now
}
