package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// The PostgreSQL store (core/pgstore): audit, inspect and reset work on
// its table when --postgres is given, instead of on Redis.

// pgFlags are the connection flags of the PostgreSQL store.
type pgFlags struct {
	url    string
	schema string
	table  string
}

func (p *pgFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.url, "postgres", "", "the PostgreSQL store's database `URL` (postgres://user@host:port/db; \"env\": $DATABASE_URL) instead of Redis")
	fs.StringVar(&p.schema, "pg-schema", pgstore.DefaultSchema, "the PostgreSQL store's `schema` (pgstore.WithSchema)")
	fs.StringVar(&p.table, "pg-table", pgstore.DefaultTable, "the PostgreSQL store's `table` (pgstore.WithTable)")
}

// options returns the store options of the flags.
func (p *pgFlags) options() []pgstore.Option {
	return []pgstore.Option{pgstore.WithSchema(p.schema), pgstore.WithTable(p.table)}
}

// A pgTarget is a connected PostgreSQL store and the key prefix to work on.
type pgTarget struct {
	pool   *pgxpool.Pool
	table  string // "schema"."table", quoted
	desc   string // postgres host:port db name, table schema.table
	prefix string
	keys   core.KeyBuilder
	flags  pgFlags
}

// openPostgres connects to the database of the flags, checks that the
// store's table is there and prints the server line on stderr.
func (c *connFlags) openPostgres(ctx context.Context, e env) (*pgTarget, error) {
	kb, err := core.NewKeyBuilder(c.prefix)
	if err != nil {
		return nil, fmt.Errorf("%w (--prefix)", err)
	}
	if _, err := pgstore.SchemaSQL(c.pg.options()...); err != nil {
		return nil, err // a bad schema or table name, named
	}
	raw := c.pg.url
	if raw == "env" {
		if raw = e.getenv("DATABASE_URL"); raw == "" {
			return nil, errors.New("ratelimit: --postgres env: $DATABASE_URL is not set")
		}
	}
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: --postgres: %w", err)
	}
	cfg.MaxConns = 2
	cfg.ConnConfig.ConnectTimeout = c.dialTimeout
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: --postgres: %w", err)
	}
	t := &pgTarget{pool: pool, table: `"` + c.pg.schema + `"."` + c.pg.table + `"`, prefix: c.prefix, keys: kb, flags: c.pg,
		desc: fmt.Sprintf("postgres %s:%d db %s, table %s.%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, c.pg.schema, c.pg.table)}
	pctx, cancel := context.WithTimeout(ctx, c.dialTimeout+c.timeout)
	defer cancel()
	var found bool
	if err := pool.QueryRow(pctx, "SELECT to_regclass($1) IS NOT NULL", t.table).Scan(&found); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ratelimit: cannot reach PostgreSQL (%s): %w", t.desc, err)
	}
	if !found {
		pool.Close()
		return nil, fmt.Errorf("ratelimit: %s: no such table (wrong --pg-schema, --pg-table or database?)", t.desc)
	}
	fmt.Fprintln(e.stderr, t.desc)
	return t, nil
}

// Close closes the pool.
func (t *pgTarget) Close() { t.pool.Close() }

// likeEscape escapes the characters special to LIKE (with ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// dbNow returns the database's time in µs since the stores' epoch.
func (t *pgTarget) dbNow(ctx context.Context) (int64, error) {
	var now int64
	err := t.pool.QueryRow(ctx, "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - $1", int64(keylayout.EpochUnix)*1_000_000).Scan(&now)
	return now, err
}

// A pgRow is one row of the store's table.
type pgRow struct {
	key       string
	alg       int16
	expireAt  int64
	state     string // decoded, for inspect
	bytes     int64
	name      keylayout.Name
	expiresIn time.Duration
}

// rows returns the rows whose keys match the LIKE pattern, with their
// expiry measured from the database's clock.
func (t *pgTarget) rows(ctx context.Context, pattern string) ([]pgRow, error) {
	now, err := t.dbNow(ctx)
	if err != nil {
		return nil, err
	}
	rs, err := t.pool.Query(ctx, `SELECT key, alg, expire_at, pg_column_size(d.*),
		concat_ws(' ', 'x=' || x, 'ts=' || ts, 'w=' || w, 'n=' || n, 'p=' || p,
		  'log=' || cardinality(log_at), 'leases=' || cardinality(lease_id), 'tombstones=' || cardinality(tomb_id))
		FROM `+t.table+` d WHERE key LIKE $1 ESCAPE '\' ORDER BY key`, pattern)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []pgRow
	for rs.Next() {
		var r pgRow
		if err := rs.Scan(&r.key, &r.alg, &r.expireAt, &r.bytes, &r.state); err != nil {
			return nil, err
		}
		r.name = keylayout.Parse(r.key)
		r.expiresIn = time.Duration(r.expireAt-now) * time.Microsecond
		out = append(out, r)
	}
	return out, rs.Err()
}

// maxRowLife is the longest a row can live: the longest TTL a limit
// implies (a refill of 366 days) and a day of margin. A row expiring later
// was not written by the store.
const maxRowLife = 367 * 24 * time.Hour

// pgAudit reports the rows under the prefix and its sub-prefixes: per
// prefix, limit and algorithm, live and expired rows (those the sweep has
// not deleted yet) and bytes, and every row that would outlive any limit.
func pgAudit(ctx context.Context, conn connFlags, af auditFlags, e env) int {
	t, err := conn.openPostgres(ctx, e)
	if err != nil {
		return fail(e.stderr, err)
	}
	defer t.Close()
	rows, err := t.rows(ctx, likeEscape(t.prefix+":")+"%")
	if err != nil {
		return fail(e.stderr, fmt.Errorf("ratelimit: audit (%s): %w", t.desc, err))
	}
	if len(rows) == 0 {
		fmt.Fprintf(e.stderr, "ratelimit: audit found no rows under prefix %q (wrong database, table or prefix?)\n", t.prefix)
		return exitNoKeys
	}
	type group struct{ rows, expired, bytes int64 }
	groups := map[string]*group{}
	clients := map[string]int64{}
	var tooLong []pgRow
	for _, r := range rows {
		g := groups[r.name.Prefix+"\t"+r.name.Limit+"\t"+r.name.Algorithm]
		if g == nil {
			g = &group{}
			groups[r.name.Prefix+"\t"+r.name.Limit+"\t"+r.name.Algorithm] = g
		}
		g.rows, g.bytes = g.rows+1, g.bytes+r.bytes
		if r.expiresIn < 0 {
			g.expired++
		}
		if r.expiresIn > maxRowLife {
			tooLong = append(tooLong, r)
		}
		clients[keylayout.Client(r.name.Prefix, r.name.Tag)]++
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%d rows, %d clients under prefix %q\n", len(rows), len(clients), t.prefix)
	fmt.Fprintln(tw, "PREFIX\tLIMIT\tALG\tROWS\tEXPIRED (to sweep)\tBYTES")
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", k, g.rows, g.expired, g.bytes)
	}
	_ = tw.Flush()
	printTopClients(e.stdout, clients, af.top)
	for i, r := range tooLong {
		if i == af.list {
			break
		}
		fmt.Fprintf(e.stdout, "expires in %s, beyond any limit: %s\n", fmtDuration(r.expiresIn), r.key)
	}
	if len(tooLong) > 0 {
		fmt.Fprintf(e.stderr, "ratelimit: audit found %d rows that outlive any limit (expiry beyond %s) under prefix %q\n", len(tooLong), maxRowLife, t.prefix)
		return exitFindings
	}
	return exitOK
}

// printTopClients lists the n clients with the most rows.
func printTopClients(w io.Writer, clients map[string]int64, n int) {
	if n == 0 {
		return
	}
	names := slices.SortedFunc(maps.Keys(clients), func(a, b string) int {
		if clients[a] != clients[b] {
			return int(clients[b] - clients[a])
		}
		return strings.Compare(a, b)
	})
	fmt.Fprintf(w, "busiest clients (most rows):\n")
	for _, c := range names[:min(n, len(names))] {
		fmt.Fprintf(w, "  %d\t%s\n", clients[c], c)
	}
}

// pgInspect shows the rows of one client, or with limits, its quota as a
// peek (a cost-0 take of the store: nothing is charged).
func pgInspect(ctx context.Context, conn connFlags, cl client, limits []core.Limit, e env) int {
	t, err := conn.openPostgres(ctx, e)
	if err != nil {
		return fail(e.stderr, err)
	}
	defer t.Close()
	fmt.Fprintf(e.stdout, "client %s: rows %s*\n", cl.tag, keylayout.ClientHead(t.prefix, cl.tag))
	if len(limits) > 0 {
		err = t.inspectLimits(ctx, e.stdout, cl, limits)
	} else {
		err = t.inspectRows(ctx, e.stdout, cl)
	}
	if err != nil {
		return fail(e.stderr, fmt.Errorf("ratelimit: inspect (%s): %w", t.desc, err))
	}
	return exitOK
}

func (t *pgTarget) inspectLimits(ctx context.Context, w io.Writer, cl client, limits []core.Limit) error {
	store, err := pgstore.New(ctx, t.pool, append(t.flags.options(), pgstore.WithoutMigration(), pgstore.WithSweep(0, 1))...)
	if err != nil {
		return err
	}
	defer store.Close()
	keys := (&target{prefix: t.prefix, keys: t.keys}).keysOf(cl, limits)
	ds, err := store.Take(ctx, nil, keys, limits, 0)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LIMIT\tALGORITHM\tQUOTA\tREMAINING\tFULL IN\tKEY")
	for i, d := range ds {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", d.Limit.EffectiveName(), d.Limit.Algorithm, describeLimit(d.Limit),
			d.Remaining, d.Limit.Capacity(), fmtDuration(d.ResetAfter), keys[i])
	}
	return tw.Flush()
}

func (t *pgTarget) inspectRows(ctx context.Context, w io.Writer, cl client) error {
	rows, err := t.rows(ctx, likeEscape(keylayout.ClientHead(t.prefix, cl.tag))+"%")
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "no rows under prefix %q: every limit of this client is at full quota (or the prefix or identity is not the limiter's)\n", t.prefix)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tALGORITHM\tEXPIRES IN\tSTATE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.key, core.Algorithm(r.alg), fmtDuration(r.expiresIn), r.state)
	}
	return tw.Flush()
}

// pgReset deletes the rows of one client (or lists them, dryRun).
func pgReset(ctx context.Context, conn connFlags, cl client, dryRun bool, e env) int {
	t, err := conn.openPostgres(ctx, e)
	if err != nil {
		return fail(e.stderr, err)
	}
	defer t.Close()
	pattern := likeEscape(keylayout.ClientHead(t.prefix, cl.tag)) + "%"
	verb, sql := "deleted", `DELETE FROM `+t.table+` WHERE key LIKE $1 ESCAPE '\' RETURNING key`
	if dryRun {
		verb, sql = "would delete", `SELECT key FROM `+t.table+` WHERE key LIKE $1 ESCAPE '\' ORDER BY key`
	}
	rs, err := t.pool.Query(ctx, sql, pattern)
	if err != nil {
		return fail(e.stderr, fmt.Errorf("ratelimit: reset (%s): %w", t.desc, err))
	}
	defer rs.Close()
	n := 0
	for rs.Next() {
		var key string
		if err := rs.Scan(&key); err != nil {
			return fail(e.stderr, err)
		}
		fmt.Fprintln(e.stdout, verb, key)
		n++
	}
	if err := rs.Err(); err != nil {
		return fail(e.stderr, fmt.Errorf("ratelimit: reset (%s): %w", t.desc, err))
	}
	fmt.Fprintf(e.stdout, "%d rows %s\n", n, verb)
	return exitOK
}

const pgSchemaUsage = `usage: ratelimit pg-schema [--pg-schema S] [--pg-table T] [--unlogged]

Prints the SQL that creates or updates the PostgreSQL store's schema, table
and functions (pgstore.SchemaSQL), for a migration tool when the app runs
the store with pgstore.WithoutMigration. It is idempotent; apply it as one
transaction: psql -1 -f schema.sql. No database is contacted.

Flags:
`

func runPGSchema(_ context.Context, args []string, e env) int {
	fs := flag.NewFlagSet("pg-schema", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var p pgFlags
	p.register(fs)
	unlogged := fs.Bool("unlogged", false, "create the table UNLOGGED (pgstore.WithUnlogged)")
	fs.Usage = func() { fmt.Fprint(e.stderr, pgSchemaUsage); fs.PrintDefaults() }
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		fmt.Fprintln(e.stderr, "ratelimit: pg-schema takes no arguments")
		return exitError
	}
	opts := p.options()
	if *unlogged {
		opts = append(opts, pgstore.WithUnlogged())
	}
	sql, err := pgstore.SchemaSQL(opts...)
	if err != nil {
		return fail(e.stderr, err)
	}
	fmt.Fprint(e.stdout, sql)
	return exitOK
}
