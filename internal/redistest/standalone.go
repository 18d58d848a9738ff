package redistest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// A Server is a standalone Redis server under test: one this package
// started, or the one REDIS_URL names. Its clients play the app nodes:
// each [Server.Client] is an independent connection pool to the same server.
type Server struct {
	opts    *redis.Options
	started bool
	proc    *process // for a Dedicated server: the faults of faults.go
}

// shared is the standalone server of this test binary.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Standalone returns the standalone server shared by the tests of this
// binary, starting it on first use ([Main] stops it). When REDIS_URL is set
// it returns that server instead. It fails t when no server can be had and
// skips t under go test -short.
func Standalone(t testing.TB) *Server {
	t.Helper()
	skipShort(t)
	shared.once.Do(func() { shared.srv, shared.err = openStandalone() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

func openStandalone() (*Server, error) {
	if url := os.Getenv("REDIS_URL"); url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("redistest: REDIS_URL: %w", err)
		}
		return &Server{opts: opts}, nil
	}
	if !mainRunning() {
		return nil, errNoMain
	}
	p, err := startProcess(false)
	if err != nil {
		return nil, err
	}
	return &Server{opts: &redis.Options{Addr: p.addr}, started: true}, nil
}

// Dedicated starts a standalone server for t alone, even when REDIS_URL is
// set, and stops it when t ends: for tests that read server-wide state such
// as INFO commandstats or that flush the script cache.
func Dedicated(t testing.TB) *Server {
	t.Helper()
	skipShort(t)
	if !mainRunning() {
		t.Fatal(errNoMain)
	}
	p, err := startProcess(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return &Server{opts: &redis.Options{Addr: p.addr}, started: true, proc: p}
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return s.opts.Addr }

// Started reports whether this package started the server (so a test may
// change server-wide state), as opposed to one named by REDIS_URL.
func (s *Server) Started() bool { return s.started }

// Options returns a fresh copy of the client options for the server, to be
// adjusted before [redis.NewClient].
func (s *Server) Options() *redis.Options {
	o := *s.opts
	return &o
}

// Client returns a new client of the server, closed when t ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(s.Options())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Clients returns n independent clients of the server (n app nodes), each
// closed when t ends.
func (s *Server) Clients(t testing.TB, n int) []*redis.Client {
	t.Helper()
	cs := make([]*redis.Client, n)
	for i := range cs {
		cs[i] = s.Client(t)
	}
	return cs
}
