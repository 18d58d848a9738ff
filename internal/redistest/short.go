package redistest

import (
	"errors"
	"testing"
)

// errNoMain explains how to let this package stop the servers it starts.
var errNoMain = errors.New("redistest: call redistest.Main(m) from TestMain, so the servers this package starts are stopped: func TestMain(m *testing.M) { redistest.Main(m) }")

// skipShort skips t under go test -short: the only case in which a test
// that needs Redis does not run.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("redistest: -short: skipping a test that needs a Redis server")
	}
}
