package pgstore

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"strings"
)

// SchemaVersion is the version of the store's table and functions
// (schema.sql), in the comment on the table.
const SchemaVersion = 2

//go:embed schema.sql
var schemaSQL string

// maxIdentLen bounds a schema or table name: PostgreSQL's 63 bytes, less
// the "_release" of the longest function name.
const maxIdentLen = 48

// validateIdent checks a schema or table name given to option.
func validateIdent(option, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("ratelimit: pgstore: %s: name must not be empty", option)
	case len(name) > maxIdentLen:
		return fmt.Errorf("ratelimit: pgstore: %s: name %q is longer than %d bytes", option, name, maxIdentLen)
	case name[0] >= '0' && name[0] <= '9':
		return fmt.Errorf("ratelimit: pgstore: %s: name %q starts with a digit", option, name)
	}
	for i := 0; i < len(name); i++ {
		if b := name[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return fmt.Errorf("ratelimit: pgstore: %s: name %q has byte %q at %d; use lower-case letters, digits and '_'", option, name, b, i)
		}
	}
	return nil
}

// names are the SQL names of one store's objects, quoted and qualified.
type names struct {
	schema, table               string
	take, release, renew, sweep string
	lock                        int32 // the first key of the advisory locks
}

// newNames returns the names of the table table in schema schema, both
// valid identifiers.
func newNames(schema, table string) names {
	q := func(s string) string { return `"` + s + `"` }
	return names{
		schema: q(schema), table: q(table),
		take: q(table + "_take"), release: q(table + "_release"),
		renew: q(table + "_renew"), sweep: q(table + "_sweep"),
		lock: hash32(schema + "." + table),
	}
}

// hash32 is the FNV-1a hash of s, as the first key of advisory locks.
func hash32(s string) int32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int32(h.Sum32())
}

// render returns schema.sql for n.
func (n names) render(unlogged bool) string {
	kind := ""
	if unlogged {
		kind = "UNLOGGED"
	}
	return strings.NewReplacer(
		"{{schema}}", n.schema, "{{table}}", n.table,
		"{{take}}", n.take, "{{release}}", n.release, "{{renew}}", n.renew, "{{sweep}}", n.sweep,
		"{{lock}}", fmt.Sprint(n.lock), "{{migration_lock}}", fmt.Sprint(hash32("ratelimit pgstore migration")), "{{unlogged}}", kind,
	).Replace(schemaSQL)
}

// SchemaSQL returns the SQL that creates or updates the store's schema,
// table and functions for the options of [WithSchema], [WithTable] and
// [WithUnlogged] (others are ignored): what [New] runs, for a migration
// tool when the store runs [WithoutMigration]. It is idempotent and runs as
// one transaction when sent as one simple query (psql -1 -f, or pgx's Exec
// without arguments).
func SchemaSQL(opts ...Option) (string, error) {
	c, err := newConfig(opts)
	if err != nil {
		return "", err
	}
	return newNames(c.schema, c.table).render(c.unlogged), nil
}
