// Command ratelimit inspects and repairs the Redis state of ratelimit
// limiters:
//
//	ratelimit audit                 scan a key prefix and its sub-prefixes (rl, rl:api, ...):
//	                                keys per prefix and limit, memory, TTLs, keys without TTL,
//	                                control records per prefix, the busiest clients (--top N)
//	ratelimit inspect <identity>    the state of each limit of one client: remaining, reset
//	ratelimit reset <identity>      delete one client's keys (every limit and algorithm)
//	ratelimit tag <identity>        print the hash tag of a client's keys, for redis-cli
//	ratelimit script [--sha] [name] list the store's Lua programs, or print one for another language
//	ratelimit policy check FILE     validate a policy file (the limiters' tiers, YAML or JSON)
//	ratelimit policy diff OLD NEW   what changes between two policy files, and which counters restart
//
// A client is named by its identity, by its parts (--part, --form-part)
// for a composite one, as keyfunc.Composite builds it, or by its API key
// read from standard input (--api-key-stdin), hashed as the key functions
// hash it, so that the secret is in no argument, shell history or output.
//
// It connects to a standalone server (--redis URL, else $REDIS_URL, else
// redis://localhost:6379), a Redis Cluster (--cluster seeds) or a
// Sentinel-managed master (--sentinel addrs --sentinel-master name), and
// first prints which one on stderr (policy and tag read no server). It
// only ever uses SCAN, never KEYS. Exit status: 0 success, 1 findings
// (audit: keys without TTL or of the wrong type; policy check: an invalid
// policy), 2 an error
// (bad flags, bad URL, unreachable server, unreadable file), 3 audit found
// no key at all. docs/operations.md, "Ops CLI", has examples.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/redis/go-redis/v9"
)

func main() {
	// go-redis logs dial failures on its own; run reports them once, clearly.
	redis.SetLogger(quietLogger{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// quietLogger discards go-redis's internal log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
