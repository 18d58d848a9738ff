package core_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
)

// controlRecorder records what a ControlObserver hears.
type controlRecorder struct {
	mu     sync.Mutex
	events []core.ControlEvent
	active [][2]int
}

func (r *controlRecorder) Decided(context.Context, core.Request, core.Result)  {}
func (r *controlRecorder) BreakerChanged(core.BreakerState, core.BreakerState) {}

func (r *controlRecorder) Controlled(_ context.Context, ev core.ControlEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *controlRecorder) ControlsActive(overrides, blocks int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active = append(r.active, [2]int{overrides, blocks})
}

func (r *controlRecorder) kinds() []core.ControlKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []core.ControlKind
	for _, ev := range r.events {
		ks = append(ks, ev.Kind)
	}
	return ks
}

// Every change a limiter makes, and every reload reported to it, is told
// to its ControlObservers once, with who, what and why.
func TestControlObserverHearsEveryChange(t *testing.T) {
	ctx := core.WithOperator(context.Background(), "alice")
	rec := &controlRecorder{}
	c := newControlled(t, core.WithLimits(core.PerHour(5).WithName("h")), core.WithObserver(rec))
	t0 := c.clock.Now()
	until := t0.Add(time.Hour)

	require.NoError(t, c.SetOverride(ctx, "203.0.113.7", core.Override{Limits: []core.Limit{core.PerHour(9).WithName("h")}, Until: until, Reason: "trial"}))
	require.NoError(t, c.RemoveOverride(ctx, "203.0.113.7"))
	require.NoError(t, c.Block(ctx, "203.0.113.7", time.Hour, "abuse"))
	require.NoError(t, c.Unblock(ctx, "203.0.113.7"))
	require.NoError(t, c.Exempt(ctx, "203.0.113.7", 0, "probe"))
	require.NoError(t, c.Unexempt(ctx, "203.0.113.7"))
	c.allow(t, "203.0.113.7")
	_, err := c.Reset(ctx, "203.0.113.7", "h")
	require.NoError(t, err)
	c.ReportReload(ctx, nil)
	c.ReportReload(ctx, errors.New("policy.yaml:3: tiers.free[0].rate: must be positive"))

	assert.Equal(t, []core.ControlKind{core.ControlOverrideSet, core.ControlOverrideRemoved, core.ControlBlocked, core.ControlUnblocked,
		core.ControlExempted, core.ControlUnexempted, core.ControlReset, core.ControlReloaded, core.ControlReloadFailed}, rec.kinds())
	ev := rec.events
	assert.Equal(t, core.ControlEvent{Kind: core.ControlOverrideSet, Identity: "203.0.113.7", Limits: []string{"h"}, Until: until, Reason: "trial", By: "alice"}, ev[0])
	assert.Equal(t, core.ControlEvent{Kind: core.ControlBlocked, Identity: "203.0.113.7", Until: until, Reason: "abuse", By: "alice"}, ev[2])
	assert.Equal(t, core.ControlEvent{Kind: core.ControlReset, Identity: "203.0.113.7", Limits: []string{"h"}, Deleted: 1, By: "alice"}, ev[6])
	assert.EqualError(t, ev[8].Err, "policy.yaml:3: tiers.free[0].rate: must be positive")
	for _, e := range ev[:7] {
		assert.Equal(t, "alice", e.By, e.Kind.String())
	}
}

// A failed change tells no one.
func TestControlObserverHearsNothingOfAFailedChange(t *testing.T) {
	rec := &controlRecorder{}
	c := newControlled(t, core.WithLimits(core.PerHour(5).WithName("h")), core.WithObserver(rec))
	require.Error(t, c.Block(context.Background(), "a", -time.Hour, ""))
	assert.Empty(t, rec.kinds())
}

// The node reports how many overrides and blocks are in force, when that
// changes: set, expired, removed.
func TestControlObserverHearsActiveControls(t *testing.T) {
	ctx := context.Background()
	rec := &controlRecorder{}
	c := newControlled(t, core.WithLimits(core.PerHour(5).WithName("h")), core.WithObserver(rec))
	require.NoError(t, c.Block(ctx, "a", time.Minute, ""))
	require.NoError(t, c.Block(ctx, "b", time.Hour, ""))
	require.NoError(t, c.SetOverride(ctx, "c", core.Override{Limits: []core.Limit{core.PerHour(9).WithName("h")}}))
	c.clock.Advance(time.Minute) // a's block ends; seen at the next read
	c.allow(t, "x")
	require.NoError(t, c.RemoveOverride(ctx, "c"))

	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, [][2]int{{0, 1}, {0, 2}, {1, 2}, {1, 1}, {0, 1}}, rec.active)
}

// lockingStore answers every take of the identity "locked" as a lockout
// would: the first limit LockedOut for 15 minutes.
type lockingStore struct{ *memstore.Store }

func (s lockingStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	if !strings.Contains(keys[0], "{locked}") {
		return s.Store.Take(ctx, dst, keys, limits, cost)
	}
	for i, l := range limits {
		d := core.Decision{Limit: l, Reason: core.Exhausted, RetryAfter: time.Second}
		if i == 0 {
			d = core.Decision{Limit: l, Reason: core.LockedOut, RetryAfter: 15 * time.Minute}
		}
		dst = append(dst, d)
	}
	return dst, nil
}

// A take the store answers LockedOut is told to the ControlObservers (a
// peek, which counts nothing, is not), and logged by the SlogObserver,
// hashed, at Warn.
func TestLockoutIsObservedAndLogged(t *testing.T) {
	var buf bytes.Buffer
	rec := &controlRecorder{}
	mem, err := memstore.New(memstore.WithClock(storetest.NewClock().Now))
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	l, err := core.NewLimiter(lockingStore{mem}, core.WithLimits(core.PerMinute(5).WithName("attempts"), core.PerDay(100).WithName("d")),
		core.WithDenyCache(0), core.WithObserver(rec), core.WithObserver(core.NewSlogObserver(logger)))
	require.NoError(t, err)
	ctx := context.Background()

	for range 2 {
		res, err := l.Allow(ctx, "locked")
		require.NoError(t, err)
		require.Equal(t, core.LockedOut, res.Binding().Reason)
	}
	_, err = l.AllowN(ctx, "locked", 0)
	require.NoError(t, err)
	_, err = l.Allow(ctx, "free")
	require.NoError(t, err)

	require.Len(t, rec.events, 2, "one per take the store answered LockedOut; none for the peek or another client")
	assert.Equal(t, core.ControlEvent{Kind: core.ControlLockedOut, Identity: "locked", Tier: "default", Limits: []string{"attempts"},
		RetryAfter: 15 * time.Minute}, rec.events[0])
	assert.Contains(t, buf.String(), "level=WARN msg=\"ratelimit: client locked out\" event=locked_out client="+core.HashIdentity("locked"))
	assert.Contains(t, buf.String(), "limits=[attempts] retry_after=15m0s")
	assert.NotContains(t, buf.String(), "client=locked")
}

// The SlogObserver logs an operator's change with who and why, the client
// hashed, unsampled; a failed reload at Error with its error.
func TestSlogObserverLogsControls(t *testing.T) {
	var buf bytes.Buffer
	o := core.NewSlogObserver(slog.New(slog.NewTextHandler(&buf, nil)))
	c := newControlled(t, core.WithLimits(core.PerHour(5).WithName("h")), core.WithObserver(o))
	ctx := core.WithOperator(context.Background(), "alice")
	for i := range 30 { // more than the sampled log's burst of 10
		require.NoError(t, c.Block(ctx, "203.0.113.7", time.Duration(i+1)*time.Minute, "credential stuffing"))
	}
	c.ReportReload(ctx, errors.New("bad policy"))

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 31, "every change logged: not sampled")
	assert.Equal(t, `level=INFO msg="ratelimit: control blocked" event=blocked client=`+core.HashIdentity("203.0.113.7")+
		` until=2025-01-01T00:01:00.000Z reason="credential stuffing" by=alice`, strings.SplitN(lines[0], " ", 2)[1])
	assert.Contains(t, lines[30], `level=ERROR msg="ratelimit: policy refused, the old one still applies" event=reload_failed error="bad policy"`)
	assert.NotContains(t, buf.String(), "203.0.113.7")
}

func TestControlKindString(t *testing.T) {
	assert.Equal(t, "override_set", core.ControlOverrideSet.String())
	assert.Equal(t, "reload_failed", core.ControlReloadFailed.String())
	assert.Equal(t, "ControlKind(0)", core.ControlKind(0).String())
	assert.Equal(t, "ControlKind(99)", core.ControlKind(99).String())
}
