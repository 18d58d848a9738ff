package core_test

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// Two limiters over one store: what one node sets, the other applies
// within ControlSyncEvery. core/memstore and core/redisstore run the same
// suite on their stores.
func TestControlNodes(t *testing.T) {
	logtest.CaptureDefault(t, slog.LevelWarn)
	storetest.RunControlNodes(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
		return slices.Repeat([]core.Store{newControlStore(t, now)}, n)
	})
}
