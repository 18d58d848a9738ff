package redistest

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// Faults of a [Dedicated] server, for fault tests. They fail t on any other
// server: the shared one serves other tests, and a REDIS_URL server is not
// ours to break.

// Freeze stops the server process (SIGSTOP): it keeps its connections and
// its port, and the kernel still accepts new connections, but nothing is
// answered until [Server.Thaw]. A frozen server is killed normally when t
// ends.
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	if err := s.process(t).signal(sigStop); err != nil {
		t.Fatal(err)
	}
}

// Thaw resumes a frozen server (SIGCONT). It then answers everything that
// was sent to it while frozen.
func (s *Server) Thaw(t testing.TB) {
	t.Helper()
	if err := s.process(t).signal(sigCont); err != nil {
		t.Fatal(err)
	}
}

// Kill kills the server (SIGKILL) and waits until it is gone: its port
// refuses connections until [Server.Restart].
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.process(t).kill()
}

// Restart starts a killed server again on the same port and waits until it
// answers. It comes back empty: no keys, no cached scripts.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.process(t).restart(); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) process(t testing.TB) *process {
	t.Helper()
	if s.proc == nil {
		t.Fatal("redistest: only a Dedicated server can be frozen, killed or restarted")
	}
	return s.proc
}

// UnassignedClusterNode starts a cluster-mode server for t alone that
// belongs to no cluster and serves no slot, so every command on a key
// fails with CLUSTERDOWN. It stops the server when t ends.
func UnassignedClusterNode(t testing.TB) *Server {
	t.Helper()
	skipShort(t)
	if !mainRunning() {
		t.Fatal(errNoMain)
	}
	p, err := startProcess(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return &Server{opts: &redis.Options{Addr: p.addr}, started: true, proc: p}
}
