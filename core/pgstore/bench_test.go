package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

// BenchmarkTake measures one take of one GCRA limit by one client, the
// database's clock deciding: one round trip to the test server.
func BenchmarkTake(b *testing.B) {
	s := newTestStore(b, time.Now)
	limits := []core.Limit{core.PerSecond(1_000_000)}
	keys := storetest.UniqueKeyBuilder(b).AppendKeys(nil, "client", limits)
	ds := make([]core.Decision, 0, 1)
	ctx := context.Background()
	for b.Loop() {
		var err error
		if ds, err = s.Take(ctx, ds[:0], keys, limits, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTakeTwoLimits measures one take of a GCRA limit and a
// concurrency lease by one client.
func BenchmarkTakeTwoLimits(b *testing.B) {
	s := newTestStore(b, time.Now)
	limits := []core.Limit{core.PerSecond(1_000_000), core.PerHour(1_000_000).WithAlgorithm(core.FixedWindow)}
	keys := storetest.UniqueKeyBuilder(b).AppendKeys(nil, "client", limits)
	ds := make([]core.Decision, 0, 2)
	ctx := context.Background()
	for b.Loop() {
		var err error
		if ds, err = s.Take(ctx, ds[:0], keys, limits, 1); err != nil {
			b.Fatal(err)
		}
	}
}
