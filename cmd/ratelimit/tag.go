package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

const tagUsage = `usage: ratelimit tag <identity> [flags]
       ratelimit tag --part P [--part P | --form-part FIELD=VALUE]... [flags]

Prints the hash tag of a client's keys, what is between { and } in
<prefix>:{<tag>}:<limit>:<algorithm>, computed as the limiter computes it:
core.SafeIdentity of the identity (core.Identity(parts...) with --part,
core.Identity(route, identity) with --route). With --pattern it prints the
SCAN pattern of the client's keys instead, for redis-cli:

  redis-cli --scan --pattern "$(ratelimit tag --pattern --prefix rl:login \
      --form-part account=alice --part 203.0.113.7)"

It does not connect to Redis. On stderr it says how the tag was built.

Flags:
`

func runTag(_ context.Context, args []string, e env) int {
	fs := flag.NewFlagSet("tag", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var who clientFlags
	who.registerIdentity(fs)
	prefix := fs.String("prefix", core.DefaultPrefix, "key `prefix` of the limiter, for --pattern")
	pattern := fs.Bool("pattern", false, "print the SCAN pattern of the client's keys under --prefix, not the tag")
	fs.Usage = func() { fmt.Fprint(e.stderr, tagUsage); fs.PrintDefaults() }
	cl, code, ok := who.parse(fs, args, e.stdin, e.stderr)
	if !ok {
		return code
	}
	kb, err := core.NewKeyBuilder(*prefix)
	if err != nil {
		return fail(e.stderr, fmt.Errorf("%w (--prefix)", err))
	}
	t := &target{prefix: *prefix, keys: kb}
	fmt.Fprintln(e.stderr, t.describeClient(cl))
	if *pattern {
		fmt.Fprintln(e.stdout, globEscape(keylayout.ClientHead(*prefix, cl.tag))+"*")
	} else {
		fmt.Fprintln(e.stdout, cl.tag)
	}
	return exitOK
}
