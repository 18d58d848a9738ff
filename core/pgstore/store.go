package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// A DB runs the store's statements: a *pgxpool.Pool, which the store
// shares with the app (a take holds a connection for one round trip). A
// single *pgx.Conn is not one: it is not safe for concurrent use.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// A Store is a [core.Store] on PostgreSQL. Make one with [New]; the zero
// value is not usable. It is safe for concurrent use; [Store.Close] stops
// its sweep.
type Store struct {
	db        DB
	names     names
	takeSQL   string
	leaseSQL  [2]string // release, renew
	sweepSQL  string
	now       func() time.Time // [WithClock], or nil: the database's clock
	appNow    func() time.Time // the clock of the calendar boundaries
	sync      bool             // [WithSynchronousCommit]
	calendars calendarCache

	sweepEvery time.Duration
	sweepBatch int
	stop       context.CancelFunc // stops the sweep
	done       chan struct{}
	closeOnce  sync.Once
}

var _ core.Leaser = (*Store)(nil)

// New returns a [Store] over db, after creating or updating its schema
// (schema.sql: a schema, a table and four functions, in one transaction;
// [WithoutMigration] checks instead), and starts its sweep ([WithSweep]).
// ctx bounds the migration. It fails with an error naming the option that
// is invalid, or saying why the schema could not be made.
func New(ctx context.Context, db DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("ratelimit: pgstore: nil DB")
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	n := newNames(c.schema, c.table)
	s := &Store{
		db: db, names: n, now: c.now, appNow: c.appClock(), sync: c.sync,
		takeSQL:    fmt.Sprintf("SELECT allowed, reason, remaining, reset_after, retry_after FROM %s.%s($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", n.schema, n.take),
		leaseSQL:   [2]string{fmt.Sprintf("SELECT %s.%s($1, $2, $3, $4)", n.schema, n.release), fmt.Sprintf("SELECT %s.%s($1, $2, $3, $4)", n.schema, n.renew)},
		sweepSQL:   fmt.Sprintf("SELECT %s.%s($1, $2)", n.schema, n.sweep),
		sweepEvery: c.sweepEvery, sweepBatch: c.sweepBatch,
	}
	if err := s.prepareSchema(ctx, c); err != nil {
		return nil, err
	}
	s.startSweep()
	return s, nil
}

// prepareSchema creates or updates the schema, or, with
// [WithoutMigration], checks that its take function exists.
func (s *Store) prepareSchema(ctx context.Context, c config) error {
	if c.migrate {
		// Without arguments, pgx sends the script as one simple query:
		// PostgreSQL runs its statements as one transaction.
		if _, err := s.db.Exec(ctx, s.names.render(c.unlogged)); err != nil {
			return fmt.Errorf("ratelimit: pgstore: create schema %s, table %s: %w", s.names.schema, s.names.table, classify(err))
		}
		return nil
	}
	var ok bool
	fn := s.names.schema + "." + s.names.take + "(text[], int[], bigint[], bigint[], bigint[], bigint[], bigint, bigint, text, boolean)"
	if err := s.db.QueryRow(ctx, "SELECT to_regprocedure($1) IS NOT NULL", fn).Scan(&ok); err != nil {
		return fmt.Errorf("ratelimit: pgstore: check schema: %w", classify(err))
	}
	if !ok {
		return fmt.Errorf("ratelimit: pgstore: function %s is missing: apply pgstore.SchemaSQL (ratelimit pg-schema) first, or drop WithoutMigration", fn)
	}
	return nil
}

// Capabilities implements [core.Capable]: the store holds leases
// ([core.Leaser]), and its Clock is that of [WithClock]. A take waits on
// the network, so a [core.Limiter] gives it its deadline ([core.WithTimeout]).
func (s *Store) Capabilities() core.Capabilities {
	return core.Capabilities{Clock: s.now, Leases: true}
}

// Take implements [core.Store] in one round trip: one call of the take
// function, which charges cost to every limit only if all admit it, and
// appends one [core.Decision] per limit to dst. A [core.Concurrency] limit
// needs [Store.TakeLease] for a cost above zero.
func (s *Store) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	return s.take(ctx, dst, keys, limits, cost, "")
}

// TakeLease implements [core.Leaser]: [Store.Take] that, when admitted
// with a cost above zero, holds lease under the key of every Concurrency
// limit until [Store.Release], or until it expires by the database's clock.
func (s *Store) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	if lease == "" {
		return dst, errors.New("ratelimit: pgstore: take lease: empty lease id")
	}
	return s.take(ctx, dst, keys, limits, cost, lease)
}

// maxAttempts bounds the calls of one take: a take the server rolled back
// for certain, or that never reached it (see retryable), is sent again
// while the caller's deadline allows.
const maxAttempts = 3

// take is Take and TakeLease: lease is "" for Take.
func (s *Store) take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	if err := validateTake(ctx, keys, limits, cost, lease); err != nil {
		return dst, err
	}
	args := s.takeArgs(keys, limits, cost, lease)
	var err error
	for range maxAttempts {
		var out []core.Decision
		if out, err = s.call(ctx, dst, limits, args); err == nil {
			return out, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	return dst, fmt.Errorf("ratelimit: pgstore: take: %w", classify(err))
}

// call runs the take function once and appends its decisions to dst.
func (s *Store) call(ctx context.Context, dst []core.Decision, limits []core.Limit, args []any) ([]core.Decision, error) {
	rows, err := s.db.Query(ctx, s.takeSQL, args...)
	if err != nil {
		return dst, err
	}
	defer rows.Close()
	n := len(dst)
	for i := 0; rows.Next(); i++ {
		if i == len(limits) {
			return dst[:n], fmt.Errorf("the take function returned more than %d rows", len(limits))
		}
		var d reply
		if err := rows.Scan(&d.allowed, &d.reason, &d.remaining, &d.reset, &d.retry); err != nil {
			return dst[:n], err
		}
		dst = append(dst, d.decision(limits[i]))
	}
	if err := rows.Err(); err != nil {
		return dst[:n], err
	}
	if len(dst)-n != len(limits) {
		return dst[:n], fmt.Errorf("the take function returned %d rows for %d limits", len(dst)-n, len(limits))
	}
	return dst, nil
}

// A reply is one row of the take function: one limit's decision, times in
// µs, reason 0 (admitted), 1 (exhausted) or 2 (cost too high).
type reply struct {
	allowed                 bool
	reason                  int32
	remaining, reset, retry int64
}

// reasons maps the take function's reason codes.
var reasons = [...]core.Reason{core.NotDenied, core.Exhausted, core.CostTooHigh}

func (r reply) decision(l core.Limit) core.Decision {
	reason := core.Exhausted
	if r.reason >= 0 && int(r.reason) < len(reasons) {
		reason = reasons[r.reason]
	}
	return core.Decision{
		Limit: l, Allowed: r.allowed, Reason: reason, Remaining: r.remaining,
		ResetAfter: time.Duration(r.reset) * time.Microsecond, RetryAfter: time.Duration(r.retry) * time.Microsecond,
	}
}

// takeArgs returns the arguments of the take function (schema.sql).
func (s *Store) takeArgs(keys []string, limits []core.Limit, cost int64, lease string) []any {
	algs := make([]int32, len(limits))
	rates := make([]int64, len(limits))
	periods := make([]int64, len(limits))
	caps := make([]int64, len(limits))
	bounds := []int64{}
	for i, l := range limits {
		algs[i], rates[i], periods[i], caps[i] = int32(l.Algorithm), l.Rate, l.Period.Microseconds(), l.Capacity()
		if l.Algorithm == core.CalendarWindow {
			bounds = append(bounds, s.calendars.get(l.Calendar, s.appNow())[:]...)
		}
	}
	var leaseArg *string
	if lease != "" {
		leaseArg = &lease
	}
	return []any{keys, algs, rates, periods, caps, bounds, cost, s.clock(), leaseArg, s.sync}
}

// clock returns the time to send: the reading of [WithClock] in µs since
// the epoch, or nil (NULL) for the database's clock.
func (s *Store) clock() *int64 {
	if s.now == nil {
		return nil
	}
	us := keylayout.EpochMicros(s.now())
	return &us
}

// validateTake rejects the arguments that [core.Store] rules out, so a
// caller's mistake is an error instead of nonsense from the database.
func validateTake(ctx context.Context, keys []string, limits []core.Limit, cost int64, lease string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ratelimit: pgstore: %w: %w", core.ErrStoreUnavailable, err)
	}
	if len(keys) == 0 || len(keys) != len(limits) {
		return fmt.Errorf("ratelimit: pgstore: take needs one key per limit, got %d keys and %d limits", len(keys), len(limits))
	}
	if cost < 0 {
		return fmt.Errorf("ratelimit: pgstore: cost must not be negative, got %d", cost)
	}
	for i := range limits {
		l := &limits[i]
		if err := l.Validate(); err != nil {
			return err
		}
		if l.Algorithm == core.Concurrency && cost > 0 && lease == "" {
			return fmt.Errorf("ratelimit: pgstore: limit %q is a Concurrency limit: a take of cost %d needs a lease (TakeLease)", l.EffectiveName(), cost)
		}
	}
	return nil
}
