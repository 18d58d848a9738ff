package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit statuses of run.
const (
	exitOK       = 0
	exitFindings = 1 // audit found keys without TTL or of the wrong type
	exitError    = 2 // bad usage, bad URL, unreachable server, Redis error
	exitNoKeys   = 3 // audit found no key at all under the prefix
)

const usage = `usage: ratelimit <command> [flags] [arguments]

Commands:
  audit                scan the prefix and its sub-prefixes (rl, rl:api, ...): keys per
                       prefix, limit and algorithm, memory, TTLs, keys without TTL;
                       --top N lists the clients with the most keys
  inspect <identity>   show the state of each limit of one client
  reset <identity>     delete every key of one client, and make every node drop its
                       cached denials of it (within 1s, core.ControlSyncEvery)
  override set|get|list|rm
                       a client's own limits (--tier, --limit SPEC), shared by every node
  block <identity> --for D --reason TEXT, unblock <identity>, blocks
                       deny every request of a client for D (429, reason blocked), lift
                       it (and its lockouts), list the blocked clients
  exempt <identity> --reason TEXT, unexempt <identity>
                       admit every request of a client without a store call, or end it
  controls             list every override, block and exemption under --prefix
  tag <identity>       print the hash tag of a client's keys (for redis-cli); no server
  script [--sha] [name]
                       list the Lua programs the Redis store loads, or print one (its
                       exact source, or its SHA-1) for another language; no server
  pg-schema            print the SQL of the PostgreSQL store's schema (for a migration
                       tool); no server
  policy check FILE    validate a policy file (the limiters' tiers, YAML or JSON):
                       a summary, or the error as FILE:LINE: field.path; no server
  policy diff OLD NEW  what changes from one policy file to another, per limiter and
                       tier, and which counters restart; no server

A client is named by its identity as the key function returned it, or by
--part (repeatable) for a composite identity (keyfunc.Composite,
core.Identity), --form-part FIELD=VALUE for a part of keyfunc.FormValue,
--route for a route-scoped limiter, --tag for the hash tag audit lists, or
--api-key-stdin for a client keyed by its API key or bearer token: the key is
read from standard input and hashed as the key functions hash it, so that
the secret is in no argument, shell history or output.

Every command that talks to Redis first prints the server on stderr:
  redis standalone 127.0.0.1:6379 db 0

Connection flags (all commands but tag, script and policy; default $REDIS_URL, else redis://localhost:6379):
  --redis URL                       redis://[user:password@]host[:port][/db], rediss://..., unix:///path
  --cluster SEEDS                   Redis Cluster: host:port,host:port,... or a cluster URL
                                    (redis://user:password@host:port?addr=host2:port2)
  --sentinel ADDRS --sentinel-master NAME
                                    Sentinel: host:port,... of the sentinels, or a failover URL
                                    (redis://host:26379?master_name=NAME&addr=...&password=...)
  --prefix P                        key prefix of the limiter (default "rl"; audit also
                                    covers its sub-prefixes P:<sub>)
  --dial-timeout D, --timeout D     connect and per-command timeouts (default 2s, 5s)

The PostgreSQL store (core/pgstore) instead of Redis, for audit, inspect and reset:
  --postgres URL                    postgres://user[:password]@host:port/db, or "env" for $DATABASE_URL
  --pg-schema S, --pg-table T       the store's schema and table (default "ratelimit", "state")

Exit status: 0 success, 1 a finding: audit found keys without TTL or of the
wrong type, policy check a file that is not a valid policy; 2 an error (bad flags or URL,
unreachable server, Redis error, an unreadable file), 3 audit found
no keys at all (wrong server, prefix or db?).

Run "ratelimit <command> -h" for the flags of a command.
`

// An env is what a command reads and writes besides its arguments.
type env struct {
	stdin          io.Reader // read by --api-key-stdin only
	stdout, stderr io.Writer
	getenv         func(string) string // os.Getenv; tests pass their own
}

// command is one subcommand: it parses its own flags from args.
type command func(ctx context.Context, args []string, e env) int

// run executes the command line args (without the program name) and returns
// the exit status. Tests drive it in process.
func run(ctx context.Context, args []string, e env) int {
	commands := map[string]command{"audit": runAudit, "inspect": runInspect, "policy": runPolicy, "reset": runReset, "script": runScript, "tag": runTag,
		"pg-schema": runPGSchema,
		"override":  runOverride, "block": runBlock, "unblock": runUnblock, "blocks": runBlocks, "exempt": runExempt,
		"unexempt": runUnexempt, "controls": runControls}
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitError
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "ratelimit: unknown command %q\n\n%s", args[0], usage)
		return exitError
	}
	return cmd(ctx, args[1:], e)
}

// parseArgs parses args with fs, allowing flags after positional arguments
// ("inspect alice --limit ..."); "--" ends the flags. It returns the
// positional arguments, or the exit status when parsing stopped (-h, or a
// bad flag, which fs has already reported).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitError, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, true
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), 0, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// fail reports err on stderr and returns [exitError].
func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, err)
	return exitError
}
