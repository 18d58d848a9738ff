package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// A redisServer is the Redis the cells measure: a throwaway redis-server
// this program started (and may flush between cells), or the one REDIS_URL
// names (never flushed; its other traffic shows in the server-side metrics).
type redisServer struct {
	opts    *redis.Options
	started bool
	cmd     *exec.Cmd
	dir     string
}

// openRedis returns the server named by REDIS_URL, or starts one.
func openRedis() (*redisServer, error) {
	if url := os.Getenv("REDIS_URL"); url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("bench: REDIS_URL: %w", err)
		}
		return &redisServer{opts: opts}, nil
	}
	return startRedis()
}

// startRedis starts redis-server on a free loopback port with persistence
// off (a benchmark must not measure fsync or fork), the way
// internal/redistest does for the tests, and waits until it answers PING.
func startRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("bench: redis-server not found (%v): install it (make redis) or set REDIS_URL", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ratelimit-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: temp dir: %w", err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "")
	// The kernel kills the server with this program, even on SIGKILL, so a
	// broken run leaves no redis-server behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("bench: start redis-server: %w", err), os.RemoveAll(dir))
	}
	s := &redisServer{opts: &redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))},
		started: true, cmd: cmd, dir: dir}
	if err := s.waitReady(10 * time.Second); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before redis-server binds it; that shows as a start failure.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bench: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *redisServer) waitReady(timeout time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.opts.Addr, MaxRetries: -1, PoolSize: 1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(timeout)
	for {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: redis-server on %s not ready after %s: %w", s.opts.Addr, timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// options returns a fresh copy of the client options, to be adjusted.
func (s *redisServer) options() *redis.Options {
	o := *s.opts
	return &o
}

// addr returns host:port.
func (s *redisServer) addr() string { return s.opts.Addr }

// admin returns a small client for INFO, MEMORY USAGE and FLUSHALL.
func (s *redisServer) admin() *redis.Client {
	o := s.options()
	o.PoolSize = 2
	return redis.NewClient(o)
}

// close stops a server this program started; one from REDIS_URL is left.
func (s *redisServer) close() {
	if !s.started {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.dir)
}
