package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// syncNodes is node A, which sets controls, and node B, whose reads of
// them go through a probe, over one store.
type syncNodes struct {
	clock *storetest.Clock
	a, b  *core.Limiter
	probe *controlProbe // B's
}

func newSyncNodes(t *testing.T, setProbe func(*controlProbe), opts ...core.Option) syncNodes {
	t.Helper()
	clock := storetest.NewClock()
	store := newControlStore(t, clock.Now)
	probe := newControlProbe(store)
	if setProbe != nil {
		setProbe(probe)
	}
	opts = append([]core.Option{core.WithPrefix("sync"), core.WithLimits(core.PerHour(1000).WithName("h"))}, opts...)
	a, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	b, err := core.NewLimiter(probe, opts...)
	require.NoError(t, err)
	return syncNodes{clock: clock, a: a, b: b, probe: probe}
}

func allow(t *testing.T, l *core.Limiter, identity string) core.Result {
	t.Helper()
	res, err := l.Allow(context.Background(), identity)
	require.NoError(t, err)
	return res
}

// eventually takes on l until seen holds, for up to 5 s of real time (a
// read in the background landing), and fails t if it never does.
func eventually(t *testing.T, l *core.Limiter, identity string, seen func(core.Result) bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if seen(allow(t, l, identity)) {
			return
		}
	}
	t.Fatal("not seen within 5 s")
}

func isBlocked(r core.Result) bool { return r.Binding().Reason == core.Blocked }

// A serving node reads the controls once per ControlSyncEvery, whatever
// its number of takes: one store call a second.
func TestControlsAreReadOncePerPeriod(t *testing.T) {
	n := newSyncNodes(t, nil)
	for range 100 { // 10 s of takes, 10 a second
		allow(t, n.b, "a")
		n.clock.Advance(100 * time.Millisecond)
	}
	assert.EqualValues(t, 10, n.probe.reads.Load(), "reads at 0 s, 1 s, ... 9 s")
}

// An idle node (controls older than 3 × ControlSyncEvery) waits for the
// read before it answers, so a block set meanwhile applies to its first
// take.
func TestIdleNodeWaitsForTheRead(t *testing.T) {
	n := newSyncNodes(t, func(p *controlProbe) { p.blocking = true })
	allow(t, n.b, "x")
	require.NoError(t, n.a.Block(context.Background(), "x", time.Hour, ""))
	n.clock.Advance(5 * time.Second)

	assert.True(t, isBlocked(allow(t, n.b, "x")), "the first take after the idle spell applies the block")
}

// A busy node (controls 1 to 3 periods old) does not wait: its take
// starts a read in the background and answers with what the node has;
// the takes that follow while the read runs start none; once it lands,
// the change applies.
func TestBusyNodeReadsInTheBackground(t *testing.T) {
	n := newSyncNodes(t, func(p *controlProbe) { p.blocking = true })
	allow(t, n.b, "x")
	require.NoError(t, n.a.Block(context.Background(), "x", time.Hour, ""))
	n.clock.Advance(1500 * time.Millisecond)
	release := n.probe.hold()
	reads := n.probe.reads.Load()

	assert.True(t, allow(t, n.b, "x").Allowed, "answered with the controls the node has, not held by the read")
	for range 10 {
		allow(t, n.b, "x")
	}
	release()
	eventually(t, n.b, "x", isBlocked)
	assert.Equal(t, reads+1, n.probe.reads.Load(), "one read for all the takes")
}

// The wait of an idle node is bounded by the limiter's timeout: a store
// that does not answer costs a take at most that, and the take goes on
// with what the node has.
func TestIdleWaitIsBoundedByTheTimeout(t *testing.T) {
	n := newSyncNodes(t, func(p *controlProbe) { p.blocking = true }, core.WithTimeout(100*time.Millisecond))
	allow(t, n.b, "x")
	n.clock.Advance(5 * time.Second)
	release := n.probe.hold()
	defer release()

	start := time.Now()
	res := allow(t, n.b, "x")
	assert.True(t, res.Allowed)
	assert.Less(t, time.Since(start), 3*time.Second, "bounded by the 100 ms timeout (generous margin for a loaded machine)")
}

// A failed read keeps what the node has, is logged, and is not tried again
// before ControlSyncEvery: an outage costs one read a second, and takes do
// not wait on it.
func TestFailedReadKeepsTheSnapshot(t *testing.T) {
	log := logtest.CaptureDefault(t, slog.LevelWarn)
	n := newSyncNodes(t, nil)
	require.NoError(t, n.a.Block(context.Background(), "x", time.Hour, ""))
	require.True(t, isBlocked(allow(t, n.b, "x")))
	n.probe.fail.Store(true)
	n.clock.Advance(5 * time.Second)
	reads := n.probe.reads.Load()

	assert.True(t, isBlocked(allow(t, n.b, "x")), "the block the node read stays")
	assert.True(t, isBlocked(allow(t, n.b, "x")))
	assert.Equal(t, reads+1, n.probe.reads.Load(), "no second read at once")
	assert.Contains(t, log.String(), "ratelimit: controls not read")

	n.clock.Advance(core.ControlSyncEvery)
	allow(t, n.b, "x")
	assert.Equal(t, reads+2, n.probe.reads.Load(), "tried again a period later")

	n.probe.fail.Store(false)
	require.NoError(t, n.a.Unblock(context.Background(), "x"))
	n.clock.Advance(core.ControlSyncEvery)
	assert.True(t, allow(t, n.b, "x").Allowed, "the store is back: the unblock applies")
}

// A full read (the store's log of changes, 4096 long, no longer reaches
// back to the node's generation) drops every cached denial: any client
// may have changed. An incremental read drops only those of the clients
// that changed.
func TestFullReadDropsEveryCachedDenial(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock()
	cs := newControlStore(t, clock.Now)
	store := &takeCounter{controlProbe: newControlProbe(cs)}
	l, err := core.NewLimiter(store, core.WithPrefix("full"), core.WithLimits(core.PerHour(1).WithName("h")))
	require.NoError(t, err)
	admin, err := core.NewControls(cs, "full")
	require.NoError(t, err)
	// Reads from generation 0 are full: the first change of a space
	// reaches every node as a full read.
	require.NoError(t, admin.Touch(ctx, "first-change"))
	allow(t, l, "y")
	require.False(t, allow(t, l, "y").Allowed)
	takes := store.n.Load()

	require.NoError(t, admin.Touch(ctx, "someone-else"))
	clock.Advance(core.ControlSyncEvery)
	require.False(t, allow(t, l, "y").Allowed)
	require.Equal(t, takes, store.n.Load(), "an incremental read naming another client: the cached denial answers")

	for i := range 4100 {
		require.NoError(t, admin.Touch(ctx, fmt.Sprintf("c%d", i)))
	}
	clock.Advance(core.ControlSyncEvery)
	assert.False(t, allow(t, l, "y").Allowed)
	assert.Equal(t, takes+1, store.n.Load(), "after a full read the store answers")
}

// With the real clock (no clock in the store's capabilities), takes read
// no clock for the controls; a timer marks the read due each period. A
// change on A reaches B in real time.
func TestControlsAreReadOnATimerWithTheRealClock(t *testing.T) {
	store := newControlStore(t, time.Now)
	probe := newControlProbe(store)
	probe.realClock, probe.blocking = true, true
	a, err := core.NewLimiter(store, core.WithPrefix("timer"), core.WithLimits(core.PerSecond(1000)))
	require.NoError(t, err)
	b, err := core.NewLimiter(probe, core.WithPrefix("timer"), core.WithLimits(core.PerSecond(1000)))
	require.NoError(t, err)
	allow(t, b, "x")

	require.NoError(t, a.Block(context.Background(), "x", time.Hour, ""))
	eventually(t, b, "x", isBlocked)
}
