package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// machine describes where the numbers were taken.
type machine struct {
	cpus, gomaxprocs     int
	cpuModel, goVersion  string
	kernel, redisVersion string
	redisSource          string
	loadStart, loadEnd   string
	started              time.Time
	took                 time.Duration
	commit               string
}

func describeMachine(ctx context.Context, srv *redisServer, admin *redis.Client) machine {
	m := machine{cpus: runtime.NumCPU(), gomaxprocs: runtime.GOMAXPROCS(0), goVersion: runtime.Version(),
		cpuModel: cpuModel(), kernel: readTrim("/proc/sys/kernel/osrelease"), loadStart: loadAvg(),
		started: time.Now().UTC(), commit: gitCommit()}
	m.redisSource = "started by the suite (--save \"\" --appendonly no)"
	if !srv.started {
		m.redisSource = "REDIS_URL (shared: its other traffic is in the server-side numbers)"
	}
	if info, err := admin.Info(ctx, "server").Result(); err == nil {
		m.redisVersion = infoField(info, "redis_version")
	}
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// loadAvg is the 1, 5 and 15 minute load average: a busy shared machine
// shows here before it shows as noise in the tables.
func loadAvg() string {
	f := strings.Fields(readTrim("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func infoField(info, field string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return "unknown"
}

// gitCommit is the commit of the library under test, "+dirty" when the
// work tree has changes.
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		commit += "+dirty"
	}
	return commit
}

// peerModules are the modules compared, in report order.
var peerModules = []struct{ path, what string }{
	{"github.com/redis/go-redis/v9", "Redis client of ours and of the go-redis peers"},
	{"github.com/go-redis/redis_rate/v10", "GCRA, one Lua script"},
	{"github.com/throttled/throttled/v2", "GCRA: pipelined TIME + GET, then a compare-and-swap script (EVAL), retried up to 10 times, then an error; memstore"},
	{"github.com/ulule/limiter/v3", "fixed window (Lua INCRBY + PEXPIRE); memory store"},
	{"github.com/sethvargo/go-limiter", "memorystore; the store interface go-redisstore implements"},
	{"github.com/sethvargo/go-redisstore", "tokens per interval in a hash, one Lua script, over redigo"},
	{"github.com/gomodule/redigo", "Redis client of go-redisstore"},
	{"github.com/go-chi/httprate", "sliding window counter, local counter"},
	{"github.com/go-chi/httprate-redis", "httprate's Redis counter: MGET, then MULTI INCRBY EXPIRE; httprate holds one mutex per limiter across both"},
	{"github.com/mennanov/limiters", "SlidingWindowRedis: pipelined INCR, PEXPIRE, GET; the INCR counts denied requests too"},
	{"golang.org/x/time", "rate.Limiter, one per client in a sync.Map"},
}

// moduleVersions returns the version of every module this binary was
// built with, as recorded in its build info.
func moduleVersions() map[string]string {
	out := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, d := range info.Deps {
		v := d.Version
		if d.Replace != nil {
			v = d.Replace.Version
		}
		out[d.Path] = v
	}
	return out
}
