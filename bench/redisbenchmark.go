package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redis-benchmark, Redis's own load generator in C, sends the same
// EVALSHA of `return 1`: a reference for what the Go client side costs.
// It is not interleaved with the Go runs, so it has no within-round ratio.

type redisBenchmarkResult struct {
	c         int
	perSecond float64
	p50, p99  time.Duration
	err       error
}

// runRedisBenchmark sends n EVALSHAs over c connections, each on one of
// 10,000 random keys. n is sized to run for about d at rate perSecond.
func runRedisBenchmark(ctx context.Context, srv *redisServer, admin *redis.Client, c int, d time.Duration, perSecond float64) redisBenchmarkResult {
	res := redisBenchmarkResult{c: c}
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		res.err = err
		return res
	}
	sha, err := admin.ScriptLoad(ctx, noopScript).Result()
	if err != nil {
		res.err = err
		return res
	}
	host, port, _ := strings.Cut(srv.addr(), ":")
	n := max(int(perSecond*d.Seconds()), 2000)
	args := []string{"-h", host, "-p", port, "-c", strconv.Itoa(c), "-n", strconv.Itoa(n), "-r", "10000", "--csv"}
	if o := srv.options(); o.Password != "" {
		args = append(args, "-a", o.Password)
	}
	out, err := exec.CommandContext(ctx, bin, append(args, "evalsha", sha, "1", "rlb:__rand_int__")...).Output()
	if err != nil {
		res.err = fmt.Errorf("redis-benchmark: %w", err)
		return res
	}
	return parseRedisBenchmark(res, string(out))
}

// parseRedisBenchmark reads the CSV row: test, rps, avg, min, p50, p95, p99, max.
func parseRedisBenchmark(res redisBenchmarkResult, out string) redisBenchmarkResult {
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(records) < 2 || len(records[1]) < 7 {
		res.err = fmt.Errorf("redis-benchmark: unexpected output %q", out)
		return res
	}
	r := records[1]
	res.perSecond, _ = strconv.ParseFloat(r[1], 64)
	res.p50 = millis(r[4])
	res.p99 = millis(r[6])
	return res
}

func millis(s string) time.Duration {
	ms, _ := strconv.ParseFloat(s, 64)
	return time.Duration(ms * float64(time.Millisecond))
}
