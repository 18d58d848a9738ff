package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/ratelimitkit/ratelimit/core/redisstore"
)

const scriptUsage = `usage: ratelimit script [--sha] [name]

Prints the Lua programs the Redis store (core/redisstore) loads, so that a
service in another language can run them (docs/redis-protocol.md):

  ratelimit script               lists the programs: SHA-1, name, what takes it runs
  ratelimit script NAME          prints program NAME, byte for byte what EVAL sends
  ratelimit script --sha NAME    prints its SHA-1, what EVALSHA names

A take of one limit runs the program of its algorithm (take_gcra,
take_token_bucket, take_fixed_window, take_sliding_window, take_sliding_log),
a take of several limits (or of one calendar or concurrency limit) the
program take; the release and renewal of a concurrency limit's lease the
program lease; the controls of a key prefix (overrides, blocks, exemptions)
the program control. It does not connect to Redis.

  ratelimit script take_gcra > take_gcra.lua

Flags:
`

func runScript(_ context.Context, args []string, e env) int {
	fs := flag.NewFlagSet("script", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	sha := fs.Bool("sha", false, "print the SHA-1 of the program, not its source")
	fs.Usage = func() { fmt.Fprint(e.stderr, scriptUsage); fs.PrintDefaults() }
	names, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	scripts := redisstore.Scripts()
	switch len(names) {
	case 0:
		for _, s := range scripts {
			fmt.Fprintf(e.stdout, "%s  %-19s  %s\n", s.SHA1, s.Name, scriptPurpose(s.Name))
		}
		return exitOK
	case 1:
	default:
		return fail(e.stderr, fmt.Errorf("ratelimit: script: one program name at most, got %d", len(names)))
	}
	for _, s := range scripts {
		if s.Name != names[0] {
			continue
		}
		if *sha {
			fmt.Fprintln(e.stdout, s.SHA1)
		} else {
			fmt.Fprint(e.stdout, s.Source)
		}
		return exitOK
	}
	known := make([]string, len(scripts))
	for i, s := range scripts {
		known[i] = s.Name
	}
	return fail(e.stderr, fmt.Errorf("ratelimit: script: no program %q (programs: %s)", names[0], strings.Join(known, ", ")))
}

// scriptPurpose says which calls run the program name.
func scriptPurpose(name string) string {
	switch name {
	case "lease":
		return "the release or renewal of a concurrency lease"
	case "control":
		return "the controls of a key prefix: set, delete, touch, read"
	}
	if alg, ok := strings.CutPrefix(name, "take_"); ok {
		if alg == "gcra" {
			alg = "GCRA"
		}
		return "a take of one " + strings.ReplaceAll(alg, "_", " ") + " limit"
	}
	return "a take of several limits, or of one calendar or concurrency limit"
}
