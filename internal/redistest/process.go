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
	"time"

	"github.com/redis/go-redis/v9"
)

// Timeouts for a server to come up. They are generous because the tests
// run on loaded CI machines; a healthy server is ready in milliseconds and
// the helpers poll, so they cost nothing when things go well.
const (
	readyTimeout = 15 * time.Second
	pollInterval = 10 * time.Millisecond
	startTries   = 3
	logTailBytes = 4 << 10
)

// installHint is the message for a missing redis-server binary.
const installHint = "redistest: redis-server not found in PATH (%v).\n" +
	"Install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis),\n" +
	"or point the tests at existing servers with REDIS_URL / REDIS_CLUSTER_ADDRS,\n" +
	"or run go test -short to skip the tests that need Redis"

// A process is one redis-server started by this package, in a temp dir of
// its own that holds its log (and, for cluster nodes, nodes.conf).
type process struct {
	addr    string
	busPort int // cluster bus port; 0 for a standalone server
	dir     string
	logPath string
	bin     string
	args    []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has exited
	stopped bool
}

// startProcess starts a redis-server on free loopback ports and waits until
// it answers PING. cluster adds the cluster-mode flags. A port taken between
// choosing and binding it is retried with new ports.
func startProcess(cluster bool, extra ...string) (*process, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf(installHint, err)
	}
	return retryPortTaken(func() (*process, error) { return tryStart(bin, cluster, extra) })
}

// retryPortTaken calls start until it succeeds, fails for another reason
// than a port taken since freePort chose it, or startTries are used up.
func retryPortTaken(start func() (*process, error)) (*process, error) {
	var lastErr error
	for try := 0; try < startTries; try++ {
		p, err := start()
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "already in use") {
			break
		}
	}
	return nil, lastErr
}

func tryStart(bin string, cluster bool, extra []string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, fmt.Errorf("redistest: temp dir: %w", err)
	}
	p := &process{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, logPath: filepath.Join(dir, "redis.log")}
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", ""}
	if cluster {
		if p.busPort, err = freePort(); err != nil {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(p.busPort), "--cluster-announce-ip", "127.0.0.1")
	}
	p.bin, p.args = bin, append(args, extra...)
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

// start runs the server with its output appended to p.logPath. The
// process is killed with the test binary on Linux (see sysProcAttr).
func (p *process) start() error {
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("redistest: server log: %w", err)
	}
	defer log.Close() // the child holds its own descriptor
	cmd := exec.Command(p.bin, p.args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start %s: %w", filepath.Base(p.bin), err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	return nil
}

// current returns the running command and its done channel.
func (p *process) current() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd, p.done
}

// signal sends sig to the server (SIGSTOP freezes it, SIGCONT thaws it).
func (p *process) signal(sig os.Signal) error {
	cmd, _ := p.current()
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("redistest: signal %v to the server on %s: %w", sig, p.addr, err)
	}
	return nil
}

// kill kills the server (SIGKILL, also when frozen) and waits for it to
// exit, keeping its directory for a restart.
func (p *process) kill() {
	cmd, done := p.current()
	_ = cmd.Process.Kill()
	<-done
}

// restart starts the killed server again, with the same arguments on the
// same port, and waits until it answers. Without persistence it comes back
// empty.
func (p *process) restart() error {
	if err := p.start(); err != nil {
		return err
	}
	return p.waitReady()
}

// waitReady polls PING until the server answers, the process exits or
// readyTimeout passes.
func (p *process) waitReady() error {
	client := redis.NewClient(&redis.Options{Addr: p.addr, DialTimeout: time.Second, MaxRetries: -1, PoolSize: 1})
	defer client.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		cmd, done := p.current()
		select {
		case <-done:
			return fmt.Errorf("redistest: %s on %s exited during startup (%s)\n%s", filepath.Base(p.bin), p.addr, cmd.ProcessState, p.logTail())
		case <-time.After(pollInterval):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: %s on %s not ready after %s: %w\n%s", filepath.Base(p.bin), p.addr, readyTimeout, err, p.logTail())
		}
	}
}

// stop kills the server, waits for it and removes its directory. It is
// safe to call more than once.
func (p *process) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Kill()
	<-p.done
	_ = os.RemoveAll(p.dir)
}

// logTail returns the end of the server log, for failure messages.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
	}
	return "--- " + p.logPath + " ---\n" + string(b)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redistest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
