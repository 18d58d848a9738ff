package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

const resetUsage = `usage: ratelimit reset <identity> [flags]

Deletes every key of one client, whatever the limit or algorithm, so it
starts again from full quota. Other clients are untouched.

Flags:
`

func runReset(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn connFlags
	conn.register(fs)
	var who clientFlags
	who.register(fs)
	dryRun := fs.Bool("dry-run", false, "list the keys that would be deleted, delete nothing")
	fs.Usage = func() { fmt.Fprint(stderr, resetUsage); fs.PrintDefaults() }
	cl, code, ok := who.parse(fs, args, stderr)
	if !ok {
		return code
	}
	t, err := conn.open(ctx)
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
	_, keys, err := t.clientKeys(ctx, cl)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		fmt.Fprintln(w, "no keys to delete")
		return nil
	}
	if dryRun {
		for _, k := range keys {
			fmt.Fprintln(w, "would delete", k)
		}
		return nil
	}
	// The keys share one hash tag, so one DEL works on a Cluster too.
	n, err := t.client.Del(ctx, keys...).Result()
	if err != nil {
		return err
	}
	for _, k := range keys {
		fmt.Fprintln(w, "deleted", k)
	}
	fmt.Fprintf(w, "%d keys deleted\n", n)
	return nil
}
