package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

const inspectUsage = `usage: ratelimit inspect <identity> [flags]
       ratelimit inspect --part P [--part P | --form-part FIELD=VALUE]... [flags]

Shows the state of every limit of one client under --prefix. With --limit or
--tier, it computes remaining quota and reset time exactly as the limiter
would (a cost-0 take: nothing is charged); the numbers are right when the
limits given match the limiter's configuration. Without them, it lists every
key of the client with its TTL and decoded raw state, and names the
sub-prefixes (P:<sub>, other limiters) that hold keys of the same identity.

Flags:
`

func runInspect(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn connFlags
	conn.register(fs)
	var who clientFlags
	who.register(fs)
	var limits limitFlag
	fs.Var(&limits, "limit", "a limit of the client's tier, repeatable; `spec` is [name=]RATE/PERIOD[,burst=N][,alg=ALGORITHM],\nfor example per-second=10/1s,burst=100, daily=10000/1d,alg=fixed_window\nor 10000/month,tz=Europe/Madrid (a calendar quota: PERIOD day, week or month)")
	tier := fs.String("tier", "", "use the limits of `tier` free, pro or enterprise of core.RecipeTiers")
	fs.Usage = func() { fmt.Fprint(stderr, inspectUsage); fs.PrintDefaults() }
	cl, code, ok := who.parse(fs, args, e.stdin, stderr)
	if !ok {
		return code
	}
	if *tier != "" {
		tl, err := recipeTier(*tier)
		if err != nil {
			return fail(stderr, err)
		}
		limits = append(limits, tl...)
	}
	if conn.pg.url != "" {
		return pgInspect(ctx, conn, cl, limits, e)
	}
	t, err := conn.open(ctx, e)
	if err != nil {
		return fail(stderr, err)
	}
	defer t.Close()

	fmt.Fprintln(stdout, t.describeClient(cl))
	if len(limits) > 0 {
		err = t.inspectLimits(ctx, stdout, cl, limits)
	} else {
		err = t.inspectKeys(ctx, stdout, cl)
	}
	if err != nil {
		return fail(stderr, fmt.Errorf("ratelimit: inspect (%s): %w", t.desc, err))
	}
	return exitOK
}

// describeClient says which keys belong to cl.
func (t *target) describeClient(cl client) string {
	keys := keylayout.ClientHead(t.prefix, cl.tag) + "*"
	if !cl.hasID {
		return fmt.Sprintf("tag %s: keys %s", cl.tag, keys)
	}
	s := fmt.Sprintf("identity %q", cl.identity)
	if len(cl.parts) > 0 {
		quoted := make([]string, len(cl.parts))
		for i, p := range cl.parts {
			quoted[i] = strconv.Quote(p)
		}
		s += " = core.Identity(" + strings.Join(quoted, ", ") + ")"
	}
	if cl.id != cl.identity {
		s += fmt.Sprintf(" scoped to its route (limiter identity %q)", cl.id)
	}
	if cl.tag != cl.id {
		s += " (hashed: it is long or has bytes outside the key-safe set)"
	}
	return s + ": keys " + keys
}

// inspectLimits peeks at limits with the Redis store's own script.
//
// The store would warn, on slog.Default, that the tool's client may resend
// a script (it retries once, for an operator at a terminal): harmless for
// a cost-0 take, which charges nothing, so the warning is not logged.
func (t *target) inspectLimits(ctx context.Context, w io.Writer, cl client, limits []core.Limit) error {
	store, err := redisstore.New(t.client, redisstore.WithLogger(nil))
	if err != nil {
		return err
	}
	keys := t.keysOf(cl, limits)
	ds, err := store.Take(ctx, nil, keys, limits, 0)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LIMIT\tALGORITHM\tQUOTA\tREMAINING\tFULL IN\tTTL\tKEY")
	for i, d := range ds {
		ttl, err := t.client.PTTL(ctx, keys[i]).Result()
		if err != nil {
			return err
		}
		ttlText := fmtTTL(ttl)
		if ttl == -2 {
			ttlText = "(no key)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", d.Limit.Name, d.Limit.Algorithm, describeLimit(d.Limit),
			d.Remaining, d.Limit.Capacity(), fmtDuration(d.ResetAfter), ttlText, keys[i])
	}
	return tw.Flush()
}

// inspectKeys lists every key of cl with its raw state.
func (t *target) inspectKeys(ctx context.Context, w io.Writer, cl client) error {
	ck, err := t.clientKeys(ctx, cl)
	if err != nil {
		return err
	}
	if len(ck.keys) == 0 {
		fmt.Fprintf(w, "no keys under prefix %q: every limit of this client is at full quota (or the prefix or identity is not the limiter's)\n", t.prefix)
		ck.printElsewhere(w, "not shown")
		return nil
	}
	now, err := serverMicros(ctx, ck.node)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTYPE\tTTL\tSTATE")
	for _, key := range ck.keys {
		st, err := readState(ctx, ck.node, key, now)
		if err != nil && !isNil(err) {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", st.key, st.typ, fmtTTL(st.ttl), st.state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ck.printElsewhere(w, "not shown")
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
