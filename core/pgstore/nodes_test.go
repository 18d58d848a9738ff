package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/pgstore"
)

// TestTwoNodesAreExact runs two app nodes (two pools, two stores, two
// limiters) on one database, the database's clock deciding: 64 goroutines
// hammer one client with a GCRA limit of 200 a day and a fixed window of
// 150 a day beside it, and exactly 150 requests are admitted in all (the
// GCRA refills one request per 432 s, far longer than the test); a peek
// then shows both limits charged exactly for them. No update is lost and
// no take deadlocks.
func TestTwoNodesAreExact(t *testing.T) {
	limits := []core.Limit{core.PerDay(200), core.PerDay(150).WithAlgorithm(core.FixedWindow)}
	prefix := fmt.Sprintf("nodes%016x", rand.Uint64())
	nodes := make([]*core.Limiter, 2)
	for i := range nodes {
		s, err := pgstore.New(context.Background(), testPool(t, 8), testOpts()...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		nodes[i], err = core.NewLimiter(s, core.WithLimits(limits...), core.WithPrefix(prefix),
			core.WithTimeout(10*time.Second), core.WithFailureMode(core.FailClosed), core.WithoutBreaker())
		require.NoError(t, err)
	}
	var admitted, errs atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 64 {
		wg.Go(func() {
			<-start
			for range 6 {
				res, err := nodes[g%2].Allow(context.Background(), "hammered")
				switch {
				case err != nil || res.Degraded:
					errs.Add(1)
				case res.Allowed:
					admitted.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	require.Zero(t, errs.Load(), "takes that failed or degraded")
	assert.Equal(t, int64(150), admitted.Load(), "admitted of 384 by a quota of 150 a day on two nodes")
	res, err := nodes[0].AllowN(context.Background(), "hammered", 0)
	require.NoError(t, err)
	assert.Equal(t, int64(50), res.Decision(0).Remaining, "GCRA remaining after the hammering")
	assert.Equal(t, int64(0), res.Decision(1).Remaining, "fixed window remaining after the hammering")
}
