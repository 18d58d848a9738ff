package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/ratelimitkit/ratelimit/core"
)

const resetUsage = `usage: ratelimit reset <identity> [flags]
       ratelimit reset --part P [--part P | --form-part FIELD=VALUE]... [flags]

Deletes every key of one client under --prefix, whatever the limit or
algorithm (its lockout state too), so it starts again from full quota.
Then it touches the client's control record, so that every node of the
limiter drops its cached denials of the client within 1s
(core.ControlSyncEvery) plus one store round trip: without that, a node
would answer 429 from its deny cache until the cached Retry-After ended.
Other clients, and the keys other limiters (sub-prefixes P:<sub>) keep for
the same identity, are untouched; it names those sub-prefixes.

Flags:
`

func runReset(ctx context.Context, args []string, e env) int {
	stdout, stderr := e.stdout, e.stderr
	fs := flag.NewFlagSet("reset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn connFlags
	conn.register(fs)
	var who clientFlags
	who.register(fs)
	dryRun := fs.Bool("dry-run", false, "list the keys that would be deleted, delete nothing")
	fs.Usage = func() { fmt.Fprint(stderr, resetUsage); fs.PrintDefaults() }
	cl, code, ok := who.parse(fs, args, e.stdin, stderr)
	if !ok {
		return code
	}
	if conn.pg.url != "" {
		return pgReset(ctx, conn, cl, *dryRun, e)
	}
	t, err := conn.open(ctx, e)
	if err != nil {
		return fail(stderr, err)
	}
	defer t.Close()

	fmt.Fprintln(stdout, t.describeClient(cl))
	if err := t.reset(ctx, stdout, cl, *dryRun); err != nil {
		return fail(stderr, fmt.Errorf("ratelimit: reset (%s): %w", t.desc, err))
	}
	return exitOK
}

// reset deletes the keys of cl (or only lists them, in a dry run).
func (t *target) reset(ctx context.Context, w io.Writer, cl client, dryRun bool) error {
	ck, err := t.clientKeys(ctx, cl)
	if err != nil {
		return err
	}
	if len(ck.keys) == 0 && !dryRun {
		fmt.Fprintln(w, "no keys to delete")
		ck.printElsewhere(w, "not deleted")
		return t.touchOnly(ctx, w, cl)
	}
	if len(ck.keys) == 0 {
		fmt.Fprintln(w, "no keys to delete")
		ck.printElsewhere(w, "not deleted")
		return nil
	}
	if dryRun {
		for _, k := range ck.keys {
			fmt.Fprintln(w, "would delete", k)
		}
		ck.printElsewhere(w, "not to be deleted")
		return nil
	}
	ctl, err := t.controls()
	if err != nil {
		return err
	}
	// The keys share one hash tag, so one DEL works on a Cluster too.
	n, err := ctl.DeleteKeys(ctx, ck.keys)
	if err != nil {
		return err
	}
	for _, k := range ck.keys {
		fmt.Fprintln(w, "deleted", k)
	}
	fmt.Fprintf(w, "%d keys deleted\n", n)
	ck.printElsewhere(w, "not deleted")
	return t.touch(ctx, w, ctl, cl)
}

// touchOnly touches cl: a node may hold a denial of it cached from keys
// deleted or expired since.
func (t *target) touchOnly(ctx context.Context, w io.Writer, cl client) error {
	ctl, err := t.controls()
	if err != nil {
		return err
	}
	return t.touch(ctx, w, ctl, cl)
}

// touch tells every node of the limiter that cl changed, so that each
// drops its cached denials of it, and says so.
func (t *target) touch(ctx context.Context, w io.Writer, ctl *core.Controls, cl client) error {
	if err := ctl.Touch(ctx, cl.tag); err != nil {
		return err
	}
	fmt.Fprint(w, "touched the client's control record: every node of the limiter drops its cached denials\n"+
		"of this client when it reads the change, within 1s (core.ControlSyncEvery) plus one store round trip\n")
	return nil
}
