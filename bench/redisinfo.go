package main

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// An infoSnapshot is the part of INFO a cell turns into per-check costs:
// the server's CPU time, the calls of every command, and the bytes clients
// sent. One INFO call before and one after a run bracket it; their own
// cost (two INFO calls) is left out of the deltas.
type infoSnapshot struct {
	cpuSeconds float64
	calls      map[string]int64
	inputBytes int64
}

// serverCost is what a run cost the server, per check.
type serverCost struct {
	cpuMicros  float64            // used_cpu_user + used_cpu_sys
	commands   float64            // commandstats calls, INFO excluded
	inputBytes float64            // total_net_input_bytes
	mix        map[string]float64 // calls per check by command
}

func takeInfo(ctx context.Context, c *redis.Client) (infoSnapshot, error) {
	text, err := c.Info(ctx, "cpu", "stats", "commandstats").Result()
	if err != nil {
		return infoSnapshot{}, fmt.Errorf("bench: INFO: %w", err)
	}
	return parseInfo(text), nil
}

// parseInfo reads the fields takeInfo needs from INFO's "field:value" lines.
func parseInfo(text string) infoSnapshot {
	s := infoSnapshot{calls: map[string]int64{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		field, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch {
		case field == "used_cpu_user" || field == "used_cpu_sys":
			v, _ := strconv.ParseFloat(value, 64)
			s.cpuSeconds += v
		case field == "total_net_input_bytes":
			s.inputBytes, _ = strconv.ParseInt(value, 10, 64)
		case strings.HasPrefix(field, "cmdstat_"):
			s.calls[strings.TrimPrefix(field, "cmdstat_")] = parseCalls(value)
		}
	}
	return s
}

// parseCalls reads calls=N from "calls=N,usec=...".
func parseCalls(value string) int64 {
	for part := range strings.SplitSeq(value, ",") {
		if v, ok := strings.CutPrefix(part, "calls="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// costSince returns the server cost per check between before and after.
// INFO's own calls are not the contender's; the commands Lua scripts call
// (redis.call) are counted, as commandstats counts them.
func costSince(before, after infoSnapshot, checks int64) serverCost {
	if checks <= 0 {
		return serverCost{}
	}
	n := float64(checks)
	c := serverCost{
		cpuMicros:  (after.cpuSeconds - before.cpuSeconds) * 1e6 / n,
		inputBytes: float64(after.inputBytes-before.inputBytes) / n,
		mix:        map[string]float64{},
	}
	for cmd, calls := range after.calls {
		if cmd == "info" {
			continue
		}
		if d := calls - before.calls[cmd]; d > 0 {
			c.mix[cmd] = float64(d) / n
			c.commands += float64(d) / n
		}
	}
	return c
}

// mixString renders the commands sent per check, most frequent first,
// leaving out those under 0.01 per check (connection set-up, retries).
func mixString(mix map[string]float64) string {
	type kv struct {
		cmd string
		n   float64
	}
	var kvs []kv
	for cmd, n := range mix {
		if n >= 0.01 {
			kvs = append(kvs, kv{cmd, n})
		}
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].n != kvs[j].n {
			return kvs[i].n > kvs[j].n
		}
		return kvs[i].cmd < kvs[j].cmd
	})
	parts := make([]string, len(kvs))
	for i, e := range kvs {
		parts[i] = fmt.Sprintf("%s %.2g", strings.ToUpper(e.cmd), e.n)
	}
	return strings.Join(parts, ", ")
}

// keyFootprint is the Redis memory of the keys one client left.
type keyFootprint struct {
	keys     int
	bytes    int64
	noTTL    int // keys written without an expiry
	measured bool
}

// footprint finds the keys whose name contains ns (every contender puts
// its namespace in its keys) and sums MEMORY USAGE over them.
func footprint(ctx context.Context, c *redis.Client, ns string) (keyFootprint, error) {
	var f keyFootprint
	iter := c.Scan(ctx, 0, "*"+ns+"*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		bytes, err := c.MemoryUsage(ctx, key, 0).Result()
		if err != nil {
			return f, fmt.Errorf("bench: MEMORY USAGE %s: %w", key, err)
		}
		ttl, err := c.PTTL(ctx, key).Result()
		if err != nil {
			return f, fmt.Errorf("bench: PTTL %s: %w", key, err)
		}
		f.keys++
		f.bytes += bytes
		if ttl == -1 { // go-redis passes PTTL's -1 (no expiry) through
			f.noTTL++
		}
	}
	f.measured = true
	return f, iter.Err()
}
