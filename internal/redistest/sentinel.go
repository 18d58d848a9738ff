package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMasterName is the name the sentinels of a [SentinelGroup] monitor
// their master under.
const SentinelMasterName = "ratelimit"

// SentinelDownAfter is the down-after-milliseconds of a [SentinelGroup]:
// how long the master may not answer before a sentinel flags it as down.
const SentinelDownAfter = 500 * time.Millisecond

// sentinelFailoverTimeout is the failover-timeout of a [SentinelGroup]: a
// failover whose election failed is retried after twice this (6 s instead
// of the default 6 minutes).
const sentinelFailoverTimeout = 3 * time.Second

// sentinelHint is the message for a missing redis-sentinel binary.
const sentinelHint = "redistest: redis-sentinel not found in PATH or /usr/bin (%v).\n" +
	"Install it (Debian/Ubuntu: apt-get install redis-sentinel; macOS: brew install redis;\n" +
	"make test does it), or run go test -short to skip the tests that need Redis"

// A SentinelGroup is a master, one replica and the redis-sentinel
// processes that watch them, started for one test by [Sentinel], so the
// test may kill the master and watch the failover.
type SentinelGroup struct {
	master, replica *process
	sentinels       []*process
}

// Sentinel starts a master, its replica and n sentinels (quorum n/2+1,
// [SentinelDownAfter]) for t alone, waits until every sentinel knows the
// replica and the other sentinels, and stops them all when t ends. A
// missing redis-sentinel fails t; go test -short skips it.
func Sentinel(t testing.TB, n int) *SentinelGroup {
	t.Helper()
	skipShort(t)
	if !mainRunning() {
		t.Fatal(errNoMain)
	}
	bin, err := sentinelBinary()
	if err != nil {
		t.Fatal(err)
	}
	g := &SentinelGroup{}
	start := func(cluster bool, extra ...string) *process {
		t.Helper()
		p, err := startProcess(cluster, extra...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.stop)
		return p
	}
	// A master syncs a new replica 5 s after it asked, by default.
	g.master = start(false, "--repl-diskless-sync-delay", "0")
	host, port, _ := net.SplitHostPort(g.master.addr)
	g.replica = start(false, "--replicaof", host, port, "--repl-diskless-sync-delay", "0")
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := waitLinked(ctx, g.replica); err != nil {
		t.Fatal(err)
	}
	g.sentinels, err = startSentinels(bin, g.master.addr, n)
	for _, s := range g.sentinels {
		if s != nil {
			t.Cleanup(s.stop)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := waitSentinels(ctx, g.sentinels); err != nil {
		t.Fatal(err)
	}
	return g
}

// sentinelBinary finds redis-sentinel in PATH or /usr/bin, where the Debian
// package puts it.
func sentinelBinary() (string, error) {
	bin, err := exec.LookPath("redis-sentinel")
	if err == nil {
		return bin, nil
	}
	if _, statErr := os.Stat("/usr/bin/redis-sentinel"); statErr == nil {
		return "/usr/bin/redis-sentinel", nil
	}
	return "", fmt.Errorf(sentinelHint, err)
}

// startSentinels starts n sentinels watching master concurrently.
func startSentinels(bin, master string, n int) ([]*process, error) {
	procs := make([]*process, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range procs {
		wg.Go(func() { procs[i], errs[i] = startSentinel(bin, master, n/2+1) })
	}
	wg.Wait()
	return procs, errors.Join(errs...)
}

func startSentinel(bin, master string, quorum int) (*process, error) {
	return retryPortTaken(func() (*process, error) { return tryStartSentinel(bin, master, quorum) })
}

// tryStartSentinel writes a sentinel.conf (sentinels rewrite their config,
// so it lives in the process's own directory) and starts a sentinel on it.
func tryStartSentinel(bin, master string, quorum int) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-sentinel-")
	if err != nil {
		return nil, fmt.Errorf("redistest: temp dir: %w", err)
	}
	host, mport, _ := net.SplitHostPort(master)
	name := SentinelMasterName
	conf := strings.Join([]string{
		fmt.Sprintf("port %d", port),
		"bind 127.0.0.1",
		"dir " + dir,
		"daemonize no",
		`logfile ""`,
		fmt.Sprintf("sentinel monitor %s %s %s %d", name, host, mport, quorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", name, SentinelDownAfter.Milliseconds()),
		// A failed election (split votes) is retried after twice this.
		fmt.Sprintf("sentinel failover-timeout %s %d", name, sentinelFailoverTimeout.Milliseconds()),
		fmt.Sprintf("sentinel parallel-syncs %s 1", name),
	}, "\n") + "\n"
	path := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return nil, errors.Join(fmt.Errorf("redistest: sentinel.conf: %w", err), os.RemoveAll(dir))
	}
	p := &process{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir,
		logPath: filepath.Join(dir, "sentinel.log"), bin: bin, args: []string{path}}
	if err := p.start(); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	register(p)
	if err := p.waitReady(); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// waitLinked polls INFO replication on a replica until its link to the
// master is up (the initial sync is done).
func waitLinked(ctx context.Context, replica *process) error {
	client := redis.NewClient(&redis.Options{Addr: replica.addr, PoolSize: 1})
	defer client.Close()
	var last string
	for !strings.Contains(last, "master_link_status:up") {
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: replica %s not linked after %s:\n%s\n%s", replica.addr, readyTimeout, last, replica.logTail())
		case <-time.After(pollInterval):
		}
		last, _ = client.Info(ctx, "replication").Result()
	}
	return nil
}

// waitSentinels polls SENTINEL MASTER on every sentinel until it sees the
// master up, its replica and every other sentinel.
func waitSentinels(ctx context.Context, sentinels []*process) error {
	want := map[string]string{
		"flags":               "master",
		"num-slaves":          "1",
		"num-other-sentinels": strconv.Itoa(len(sentinels) - 1),
	}
	for _, s := range sentinels {
		client := redis.NewSentinelClient(&redis.Options{Addr: s.addr, PoolSize: 1})
		var last map[string]string
		for !hasAll(last, want) {
			select {
			case <-ctx.Done():
				_ = client.Close()
				return fmt.Errorf("redistest: sentinel %s not ready after %s: %v\n%s", s.addr, readyTimeout, last, s.logTail())
			case <-time.After(pollInterval):
			}
			last, _ = client.Master(ctx, SentinelMasterName).Result()
		}
		_ = client.Close()
	}
	return nil
}

func hasAll(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// MasterAddr returns the host:port of the master the group started with.
func (g *SentinelGroup) MasterAddr() string { return g.master.addr }

// ReplicaAddr returns the host:port of the replica the group started with.
func (g *SentinelGroup) ReplicaAddr() string { return g.replica.addr }

// SentinelAddrs returns the host:port of every sentinel.
func (g *SentinelGroup) SentinelAddrs() []string {
	addrs := make([]string, len(g.sentinels))
	for i, s := range g.sentinels {
		addrs[i] = s.addr
	}
	return addrs
}

// FailoverOptions returns fresh failover client options for the group, to
// be adjusted before [redis.NewFailoverClient].
func (g *SentinelGroup) FailoverOptions() *redis.FailoverOptions {
	return &redis.FailoverOptions{MasterName: SentinelMasterName, SentinelAddrs: g.SentinelAddrs()}
}

// KillMaster kills the master the group started with (SIGKILL) and waits
// until it is gone; the sentinels then promote the replica.
func (g *SentinelGroup) KillMaster(t testing.TB) {
	t.Helper()
	g.master.kill()
}
