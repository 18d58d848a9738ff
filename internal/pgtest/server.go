//go:build linux

package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A Server is a throwaway PostgreSQL server of one test: its own data
// directory in a temporary directory, its own free port on 127.0.0.1,
// trust authentication, fsync off. The test can freeze it, crash it and
// start it again on the same port and data, which it must never do to the
// shared server. It is stopped and removed when the test ends.
type Server struct {
	dir, port string
	bin       string // the directory of postgres and initdb
	cred      *syscall.Credential
	cmd       *exec.Cmd
}

// Dedicated initialises and starts a throwaway server for t. It fails t
// when PostgreSQL's server binaries are missing (scripts/ensure-postgres.sh
// installs them) and skips it under -short. As root it runs the server as
// the user postgres: PostgreSQL refuses to run as root.
func Dedicated(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("pgtest: -short: skipping a test that needs PostgreSQL")
	}
	s := &Server{bin: serverBin(t)}
	s.cred = credential(t)
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s.dir = filepath.Join(dir, "data")
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	s.port = freePort(t)
	initdb := exec.Command(filepath.Join(s.bin, "initdb"), "-D", s.dir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	s.Start(t)
	t.Cleanup(func() { s.kill() })
	return s
}

// URL returns the server's URL, database postgres.
func (s *Server) URL() string {
	return "postgres://postgres@127.0.0.1:" + s.port + "/postgres?sslmode=disable"
}

// Start starts the server (again) on its port and data, and waits until it
// answers; after a crash it first recovers from its WAL.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dir, "-p", s.port, "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=40", "-c", "shared_buffers=16MB")
	// Killed with the test binary (its backends then exit on their own).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgtest: start postgres: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.URL())
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: postgres on port %s does not answer: %v", s.port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Freeze stops every process of the server (SIGSTOP): connections stay
// open and nothing answers, as on a stalled host.
func (s *Server) Freeze(t testing.TB) { s.signal(t, syscall.SIGSTOP) }

// Thaw resumes a frozen server.
func (s *Server) Thaw(t testing.TB) { s.signal(t, syscall.SIGCONT) }

// Crash kills every process of the server (SIGKILL), as a power cut
// would; [Server.Start] brings it back with what its WAL kept.
func (s *Server) Crash(t testing.TB) {
	t.Helper()
	s.kill()
}

// signal sends sig to the postmaster and to every backend. Each backend
// is in a session of its own (PostgreSQL calls setsid in every child), so
// a process group does not reach them: the postmaster is stopped first, so
// that it forks no child that the list would miss.
func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	pid := s.cmd.Process.Pid
	if sig == syscall.SIGSTOP {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatalf("pgtest: signal %v: %v", sig, err)
		}
	}
	for _, child := range children(pid) {
		_ = syscall.Kill(child, sig) // a backend may have exited meanwhile
	}
	if sig != syscall.SIGSTOP {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatalf("pgtest: signal %v: %v", sig, err)
		}
	}
}

// kill ends the server and its backends, if it runs, and reaps it.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	pid := s.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	for _, child := range children(pid) {
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// children returns the pids of the processes whose parent is pid, from
// /proc.
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces; it ends at the last ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(filepath.Base(filepath.Dir(path))); err == nil {
				kids = append(kids, child)
			}
		}
	}
	return kids
}

// serverBin returns the directory of the newest installed postgres and
// initdb.
func serverBin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) < version(dirs[j]) })
	if len(dirs) == 0 {
		t.Fatalf("pgtest: no postgres binary (in PATH or /usr/lib/postgresql/*/bin): run scripts/ensure-postgres.sh, or apt-get install postgresql")
	}
	return dirs[len(dirs)-1]
}

func version(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

// credential returns the user postgres for a test binary running as root,
// else nil (the server runs as the test's user).
func credential(t testing.TB) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("pgtest: running as root, and PostgreSQL refuses to: no user postgres to run it as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}
