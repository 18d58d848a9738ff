package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

const inspectUsage = `usage: ratelimit inspect <identity> [flags]

Shows the state of every limit of one client. With --limit or --tier, it
computes remaining quota and reset time exactly as the limiter would (a
cost-0 take: nothing is charged); the numbers are right when the limits
given match the limiter's configuration. Without them, it lists every key of
the client with its TTL and decoded raw state.

Flags:
`

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn connFlags
	conn.register(fs)
	var who clientFlags
	who.register(fs)
	var limits limitFlag
	fs.Var(&limits, "limit", "a limit of the client's tier, repeatable; `spec` is [name=]RATE/PERIOD[,burst=N][,alg=ALGORITHM],\nfor example per-second=10/1s,burst=100 or daily=10000/1d,alg=fixed_window")
	tier := fs.String("tier", "", "use the limits of `tier` free, pro or enterprise of core.RecipeTiers")
	fs.Usage = func() { fmt.Fprint(stderr, inspectUsage); fs.PrintDefaults() }
	cl, code, ok := who.parse(fs, args, stderr)
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
	t, err := conn.open(ctx)
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
	keys := t.prefix + ":{" + cl.tag + "}:*"
	switch {
	case !cl.hasID:
		return fmt.Sprintf("tag %s: keys %s", cl.tag, keys)
	case cl.id != cl.identity:
		return fmt.Sprintf("identity %q scoped to its route (limiter identity %q): keys %s", cl.identity, cl.id, keys)
	case cl.tag != cl.id:
		return fmt.Sprintf("identity %q (hashed: it is long or has bytes outside the key-safe set): keys %s", cl.identity, keys)
	}
	return fmt.Sprintf("identity %q: keys %s", cl.identity, keys)
}

// inspectLimits peeks at limits with the Redis store's own script.
func (t *target) inspectLimits(ctx context.Context, w io.Writer, cl client, limits []core.Limit) error {
	store, err := redisstore.New(t.client)
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
	node, keys, err := t.clientKeys(ctx, cl)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		fmt.Fprintln(w, "no keys: every limit of this client is at full quota (or the prefix or identity is not the limiter's)")
		return nil
	}
	now, err := serverMicros(ctx, node)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tTYPE\tTTL\tSTATE")
	for _, key := range keys {
		st, err := t.readState(ctx, node, key, now)
		if err != nil && !isNil(err) {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", st.key, st.typ, fmtTTL(st.ttl), st.state)
	}
	return tw.Flush()
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
