package redistest

import (
	"os"
	"sync"
	"testing"
)

// registry holds every process this package started, so that [Main] can
// stop them. mainRunning records that [Main] is in charge.
var registry struct {
	mu          sync.Mutex
	mainRunning bool
	procs       []*process
}

// Main runs the tests of m, stops every server this package started (also
// when tests failed or panicked in a subtest) and exits with the tests'
// status. Call it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// On Linux the servers are also bound to the test binary's life (a killed
// binary leaves no redis-server behind).
func Main(m *testing.M) {
	registry.mu.Lock()
	registry.mainRunning = true
	registry.mu.Unlock()
	code := m.Run()
	stopAll()
	os.Exit(code)
}

func register(p *process) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.procs = append(registry.procs, p)
}

func mainRunning() bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.mainRunning
}

func stopAll() {
	registry.mu.Lock()
	procs := registry.procs
	registry.procs = nil
	registry.mu.Unlock()
	for _, p := range procs {
		p.stop()
	}
}
