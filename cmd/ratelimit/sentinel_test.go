package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// startSentinel starts a redis-sentinel watching the master at addr, which
// the test started, under name; it is stopped when t ends. It skips t when
// redis-sentinel is not installed.
func startSentinel(t *testing.T, name, addr string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Skipf("redis-sentinel not installed (%v); make test installs it", err)
	}
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sentinelAddr := l.Addr().String()
	_, sentinelPort, _ := net.SplitHostPort(sentinelAddr)
	require.NoError(t, l.Close())

	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	config := fmt.Sprintf("port %s\nbind 127.0.0.1\ndaemonize no\ndir %s\nsentinel monitor %s %s %s 1\n",
		sentinelPort, dir, name, host, port)
	require.NoError(t, os.WriteFile(conf, []byte(config), 0o600))
	cmd := exec.Command(bin, conf)
	log, err := os.Create(filepath.Join(dir, "sentinel.log"))
	require.NoError(t, err)
	defer log.Close() // the child holds its own descriptor
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})

	probe := redis.NewSentinelClient(&redis.Options{Addr: sentinelAddr, MaxRetries: -1})
	defer probe.Close()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		got, err := probe.GetMasterAddrByName(ctx, name).Result()
		return err == nil && len(got) == 2 && net.JoinHostPort(got[0], got[1]) == addr
	}, 15*time.Second, 20*time.Millisecond, "sentinel on %s knows master %s; its log is in %s", sentinelAddr, name, dir)
	return sentinelAddr
}
