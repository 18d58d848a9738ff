package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// controlStep is how far the clock moves between the takes that look for
// a change on the other node: the bound is measured to this precision.
const controlStep = 100 * time.Millisecond

// controlSettle is how long, in real time, a node keeps taking at one
// instant past [core.ControlSyncEvery] for a read of the controls that
// runs in the background (a store that does I/O) to land. It is a bound,
// not a wait: the takes stop at the first that sees the change.
const controlSettle = 5 * time.Second

// RunControlNodes checks that the controls one [core.Limiter] sets apply on
// another limiter of the same key prefix over the same state, within
// [core.ControlSyncEvery] of the change by the suite's clock (plus, for a
// store whose reads of the controls run in the background, the store
// round trip, waited for in real time). newStores is called once per case
// with n = 2 and must return 2 stores sharing one state whose clock is
// now, as for [RunConcurrency]: for Redis, two clients; for an in-process
// store, the same store twice. The stores must implement
// [core.ControlStore].
//
// The cases: an override that raises a client's limit, a block and its
// end, an exemption, and a reset, each set on node A and seen on node B,
// with the bound measured (logged) and checked; a denial node B had
// cached (its deny cache) dropped when A resets the client or raises its
// limit, long before the denial's Retry-After (issue 18, item 6); the
// node that makes a change applying it at once; and many goroutines
// taking on both nodes while an operator changes controls and the clock
// moves, after which both nodes agree.
func RunControlNodes(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	t.Run("override raised on A applies on B, cached denial dropped", func(t *testing.T) { testNodesOverride(t, newStores) })
	t.Run("block and unblock on A apply on B", func(t *testing.T) { testNodesBlock(t, newStores) })
	t.Run("exempt on A applies on B", func(t *testing.T) { testNodesExempt(t, newStores) })
	t.Run("reset on A drops B's cached denial", func(t *testing.T) { testNodesReset(t, newStores) })
	t.Run("the node that changes applies at once", func(t *testing.T) { testNodesAtOnce(t, newStores) })
	t.Run("concurrent takes while controls change", func(t *testing.T) { testNodesConcurrent(t, newStores) })
}

// twoNodes is two limiters of one prefix over stores sharing one state.
type twoNodes struct {
	clock *Clock
	a, b  *core.Limiter
}

func newTwoNodes(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store, opts ...core.Option) twoNodes {
	t.Helper()
	clock := NewClock()
	stores := newStores(t, clock.Now, 2)
	require.Len(t, stores, 2, "newStores must return n stores")
	opts = append([]core.Option{core.WithPrefix(uniquePrefix()), core.WithTimeout(time.Second)}, opts...)
	a, err := core.NewLimiter(stores[0], opts...)
	require.NoError(t, err)
	b, err := core.NewLimiter(stores[1], opts...)
	require.NoError(t, err)
	// A first change, read by both: a node reads a space at generation 0
	// in full, dropping every cached denial, which would hide whether the
	// changes of the cases reach B's deny cache one client at a time.
	require.NoError(t, a.Unexempt(context.Background(), "first-change"))
	require.NoError(t, a.SyncControls(context.Background()))
	require.NoError(t, b.SyncControls(context.Background()))
	return twoNodes{clock: clock, a: a, b: b}
}

// nodeTake makes one take of identity on l.
func nodeTake(t *testing.T, l *core.Limiter, identity string) core.Result {
	t.Helper()
	res, err := l.Allow(context.Background(), identity)
	require.NoError(t, err)
	return res
}

// seenWithin moves the clock in controlSteps from now, the instant of a
// change, and returns how long after it node's takes of identity first satisfy seen, failing t when
// that is later than ControlSyncEvery. Past ControlSyncEvery it keeps
// taking at one instant, for up to controlSettle of real time, for a
// read in the background to land.
func seenWithin(t *testing.T, nodes twoNodes, node *core.Limiter, identity string, what string, seen func(core.Result) bool) time.Duration {
	t.Helper()
	changed := nodes.clock.Now()
	for d := time.Duration(0); d <= core.ControlSyncEvery; d += controlStep {
		nodes.clock.Set(changed.Add(d))
		res := nodeTake(t, node, identity)
		for end := time.Now().Add(controlSettle); !seen(res) && d == core.ControlSyncEvery && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
			res = nodeTake(t, node, identity)
		}
		if seen(res) {
			t.Logf("%s: seen on the other node %v after the change (bound: ControlSyncEvery = %v, plus a round trip)", what, d, core.ControlSyncEvery)
			return d
		}
	}
	t.Fatalf("%s: not seen on the other node within ControlSyncEvery (%v)", what, core.ControlSyncEvery)
	return 0
}

func testNodesOverride(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	ctx := context.Background()
	hour := func(n int64) core.Limit { return core.PerHour(n).WithName("h").WithAlgorithm(core.FixedWindow) }
	nodes := newTwoNodes(t, newStores, core.WithLimits(hour(2)))
	for range 2 {
		require.True(t, nodeTake(t, nodes.b, "acme").Allowed)
	}
	denied := nodeTake(t, nodes.b, "acme")
	require.False(t, denied.Allowed)
	require.Greater(t, denied.Binding().RetryAfter, 50*time.Minute, "B holds a denial for most of an hour")

	require.NoError(t, nodes.a.SetOverride(ctx, "acme", core.Override{Limits: []core.Limit{hour(10)}, Reason: "upgrade"}))
	seenWithin(t, nodes, nodes.b, "acme", "override raised", func(r core.Result) bool { return r.Allowed && r.Overridden })
	res := nodeTake(t, nodes.b, "acme")
	assert.EqualValues(t, 10, res.Binding().Limit.Rate, "B applies the override's limit")
	assert.False(t, nodeTake(t, nodes.b, "other").Overridden, "and only to that client")
}

func testNodesBlock(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	ctx := context.Background()
	nodes := newTwoNodes(t, newStores, core.WithLimits(core.PerSecond(1000).WithName("s")))
	require.True(t, nodeTake(t, nodes.b, "mallory").Allowed)

	require.NoError(t, nodes.a.Block(ctx, "mallory", time.Hour, "scraping"))
	seenWithin(t, nodes, nodes.b, "mallory", "block", func(r core.Result) bool { return r.Binding().Reason == core.Blocked })
	res := nodeTake(t, nodes.b, "mallory")
	assert.False(t, res.Allowed)
	assert.Greater(t, res.Binding().RetryAfter, 58*time.Minute, "Retry-After until the block ends")

	require.NoError(t, nodes.a.Unblock(ctx, "mallory"))
	seenWithin(t, nodes, nodes.b, "mallory", "unblock", func(r core.Result) bool { return r.Allowed })
}

func testNodesExempt(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	ctx := context.Background()
	nodes := newTwoNodes(t, newStores, core.WithLimits(core.PerHour(1).WithName("h")))
	nodeTake(t, nodes.b, "probe")
	require.False(t, nodeTake(t, nodes.b, "probe").Allowed)

	require.NoError(t, nodes.a.Exempt(ctx, "probe", 0, "uptime checks"))
	seenWithin(t, nodes, nodes.b, "probe", "exemption", func(r core.Result) bool { return r.Allowed && r.Exempt })
}

func testNodesReset(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	ctx := context.Background()
	nodes := newTwoNodes(t, newStores, core.WithLimits(core.PerHour(2).WithName("h").WithAlgorithm(core.FixedWindow)))
	for range 2 {
		require.True(t, nodeTake(t, nodes.b, "alice").Allowed)
	}
	require.False(t, nodeTake(t, nodes.b, "alice").Allowed)

	n, err := nodes.a.Reset(ctx, "alice")
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "one key: the limit's state")
	// Without the change reaching B's deny cache, B would deny for the
	// rest of the hour (what the issue saw: 8 s, 61 s, 1 h).
	seenWithin(t, nodes, nodes.b, "alice", "reset", func(r core.Result) bool { return r.Allowed })
	res := nodeTake(t, nodes.b, "alice")
	assert.True(t, res.Allowed, "the second of the fresh quota")
	assert.False(t, nodeTake(t, nodes.b, "alice").Allowed, "and the quota counts again")
}

func testNodesAtOnce(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	ctx := context.Background()
	hour := func(n int64) core.Limit { return core.PerHour(n).WithName("h").WithAlgorithm(core.FixedWindow) }
	nodes := newTwoNodes(t, newStores, core.WithLimits(hour(1)))
	nodeTake(t, nodes.a, "bob")
	require.False(t, nodeTake(t, nodes.a, "bob").Allowed, "A caches a denial")

	_, err := nodes.a.Reset(ctx, "bob")
	require.NoError(t, err)
	assert.True(t, nodeTake(t, nodes.a, "bob").Allowed, "reset: at once on A, the clock unmoved")
	require.NoError(t, nodes.a.Block(ctx, "bob", time.Minute, ""))
	assert.Equal(t, core.Blocked, nodeTake(t, nodes.a, "bob").Binding().Reason, "block: at once on A")
	require.NoError(t, nodes.a.Unblock(ctx, "bob"))
	require.NoError(t, nodes.a.SetOverride(ctx, "bob", core.Override{Limits: []core.Limit{core.PerHour(3).WithName("h")}}))
	res := nodeTake(t, nodes.a, "bob")
	assert.True(t, res.Allowed && res.Overridden, "override: at once on A")
}

// testNodesConcurrent takes on both nodes from many goroutines while an
// operator changes the controls of some clients and the clock moves; every
// Result must be one a single state explains, and once the operator is
// done and a period has passed, both nodes agree.
func testNodesConcurrent(t *testing.T, newStores func(t *testing.T, now func() time.Time, n int) []core.Store) {
	ctx := context.Background()
	nodes := newTwoNodes(t, newStores, core.WithLimits(core.PerSecond(100).WithName("s")))
	clients := []string{"c0", "c1", "c2", "c3"}
	var bad atomic.Int64
	var firstBad atomic.Value
	check := func(id string, res core.Result) {
		if msg := inconsistent(res); msg != "" {
			bad.Add(1)
			firstBad.CompareAndSwap(nil, fmt.Sprintf("%s: %s", id, msg))
		}
	}
	stop := make(chan struct{})
	var wg, started sync.WaitGroup
	started.Add(16)
	for g := range 16 {
		node := []*core.Limiter{nodes.a, nodes.b}[g%2]
		wg.Go(func() {
			for i := 0; ; i++ {
				if i == 1 {
					started.Done() // the operator starts once every goroutine takes
				}
				select {
				case <-stop:
					return
				default:
				}
				id := clients[(g+i)%len(clients)]
				res, err := node.Allow(ctx, id)
				if err != nil {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, err.Error())
					if i == 0 {
						started.Done()
					}
					return
				}
				check(id, res)
			}
		})
	}
	started.Wait()
	operate(t, nodes, clients)
	close(stop)
	wg.Wait()
	require.Zero(t, bad.Load(), "inconsistent results; the first: %v", firstBad.Load())

	nodes.clock.Advance(core.ControlSyncEvery)
	for _, node := range []*core.Limiter{nodes.a, nodes.b} {
		require.NoError(t, node.SyncControls(ctx))
		assert.Equal(t, core.Blocked, nodeTake(t, node, "c0").Binding().Reason, "c0 ends blocked")
		assert.True(t, nodeTake(t, node, "c1").Overridden, "c1 ends overridden")
		assert.True(t, nodeTake(t, node, "c2").Exempt, "c2 ends exempt")
		res := nodeTake(t, node, "c3")
		assert.True(t, !res.Exempt && !res.Overridden && res.Binding().Reason != core.Blocked, "c3 ends without controls")
	}
}

// operate changes the controls of clients from node A and node B in turn,
// moving the clock, for 200 rounds, and leaves c0 blocked, c1 overridden,
// c2 exempt and c3 without controls.
func operate(t *testing.T, nodes twoNodes, clients []string) {
	ctx := context.Background()
	raise := core.Override{Limits: []core.Limit{core.PerSecond(200).WithName("s")}}
	for i := range 200 {
		node := []*core.Limiter{nodes.a, nodes.b}[i%2]
		id := clients[i%len(clients)]
		var err error
		switch i % 5 {
		case 0:
			err = node.Block(ctx, id, time.Hour, "round")
		case 1:
			err = node.Unblock(ctx, id)
		case 2:
			err = node.SetOverride(ctx, id, raise)
		case 3:
			err = node.Exempt(ctx, id, time.Hour, "")
		case 4:
			_, err = node.Reset(ctx, id)
		}
		require.NoError(t, err)
		nodes.clock.Advance(37 * time.Millisecond)
	}
	for _, id := range clients {
		require.NoError(t, nodes.a.Unblock(ctx, id))
		require.NoError(t, nodes.a.Unexempt(ctx, id))
		require.NoError(t, nodes.a.RemoveOverride(ctx, id))
	}
	require.NoError(t, nodes.a.Block(ctx, "c0", time.Hour, "final"))
	require.NoError(t, nodes.b.SetOverride(ctx, "c1", raise))
	require.NoError(t, nodes.a.Exempt(ctx, "c2", 0, "final"))
}

// inconsistent says what in res no single state of controls explains, or
// "".
func inconsistent(res core.Result) string {
	blocked := 0
	for i := range res.Len() {
		if res.Decision(i).Reason == core.Blocked {
			blocked++
		}
	}
	switch {
	case res.Len() != 1:
		return fmt.Sprintf("%d decisions for one limit", res.Len())
	case res.Exempt && (!res.Allowed || res.Overridden || blocked > 0):
		return "exempt, and denied, overridden or blocked"
	case res.Exempt && res.Binding().Remaining != res.Binding().Limit.Capacity():
		return "exempt without a full quota"
	case blocked > 0 && (res.Allowed || res.Overridden || res.Binding().RetryAfter <= 0):
		return "blocked, and admitted, overridden, or without a Retry-After"
	case res.Overridden && res.Binding().Limit.Rate != 200:
		return fmt.Sprintf("overridden with the tier's limit (Rate %d)", res.Binding().Limit.Rate)
	case !res.Overridden && !res.Exempt && blocked == 0 && res.Binding().Limit.Rate != 100:
		return fmt.Sprintf("not overridden with the override's limit (Rate %d)", res.Binding().Limit.Rate)
	}
	return ""
}
