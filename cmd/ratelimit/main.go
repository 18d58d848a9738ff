// Command ratelimit inspects and repairs the Redis state of ratelimit
// limiters:
//
//	ratelimit audit                 scan a key prefix: key count, memory, TTLs, keys without TTL
//	ratelimit inspect <identity>    the state of each limit of one client: remaining, reset
//	ratelimit reset <identity>      delete one client's keys (every limit and algorithm)
//
// It connects to a standalone server (--redis URL), a Redis Cluster
// (--cluster seeds) or a Sentinel-managed master (--sentinel addrs
// --sentinel-master name). It only ever uses SCAN, never KEYS. Exit status:
// 0 success, 1 audit findings (keys without TTL or of the wrong type), 2 an
// error (bad flags, bad URL, unreachable server). docs/operations.md, "Ops
// CLI", has examples.
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
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// quietLogger discards go-redis's internal log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
