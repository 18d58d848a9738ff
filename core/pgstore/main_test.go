package pgstore_test

import (
	"log/slog"
	"os"
	"testing"
)

// TestMain quiets the default logger, whose lines (every degraded decision
// of the fault test) would bury a failure's output, and closes the shared
// pool when the tests are done.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	code := m.Run()
	if p := sharedPool.pool; p != nil {
		p.Close()
	}
	os.Exit(code)
}
