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
)

const usage = `usage: ratelimit <command> [flags] [arguments]

Commands:
  audit                scan the key prefix: key count, memory, TTL distribution,
                       keys without TTL (exit status 1 when there are any)
  inspect <identity>   show the state of each limit of one client
  reset <identity>     delete every key of one client

Connection flags (all commands; default --redis redis://localhost:6379):
  --redis URL                       redis://[user:password@]host[:port][/db], rediss://..., unix:///path
  --cluster SEEDS                   Redis Cluster: host:port,host:port,... or a cluster URL
                                    (redis://user:password@host:port?addr=host2:port2)
  --sentinel ADDRS --sentinel-master NAME
                                    Sentinel: host:port,... of the sentinels, or a failover URL
                                    (redis://host:26379?master_name=NAME&addr=...&password=...)
  --prefix P                        key prefix of the limiter (default "rl")
  --dial-timeout D, --timeout D     connect and per-command timeouts (default 2s, 5s)

Run "ratelimit <command> -h" for the flags of a command.
`

// command is one subcommand: it parses its own flags from args.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// run executes the command line args (without the program name) and returns
// the exit status. Tests drive it in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	commands := map[string]command{"audit": runAudit, "inspect": runInspect, "reset": runReset}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ratelimit: unknown command %q\n\n%s", args[0], usage)
		return exitError
	}
	return cmd(ctx, args[1:], stdout, stderr)
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
