package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// A controlled limiter: a limiter over a store that keeps controls, with
// the store's takes counted and a clock the test moves.
type controlled struct {
	*core.Limiter
	clock *storetest.Clock
	probe *controlProbe
	takes *atomic.Int64
}

// takeCounter counts the takes that reach a store.
type takeCounter struct {
	*controlProbe
	n atomic.Int64
}

func (s *takeCounter) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.n.Add(1)
	return s.controlProbe.Take(ctx, dst, keys, limits, cost)
}

func newControlled(t *testing.T, opts ...core.Option) controlled {
	t.Helper()
	logtest.CaptureDefault(t, slog.LevelInfo) // the default log of control events
	clock := storetest.NewClock()
	probe := newControlProbe(newControlStore(t, clock.Now))
	store := &takeCounter{controlProbe: probe}
	l, err := core.NewLimiter(store, append([]core.Option{core.WithPrefix("ctl")}, opts...)...)
	require.NoError(t, err)
	return controlled{Limiter: l, clock: clock, probe: probe, takes: &store.n}
}

func (c controlled) allow(t *testing.T, identity string) core.Result {
	t.Helper()
	res, err := c.Allow(context.Background(), identity)
	require.NoError(t, err)
	return res
}

// A blocked client is denied on every limit, reason Blocked, with
// RetryAfter until the block ends, without a store call; the block ends by
// itself, or at once with Unblock.
func TestBlock(t *testing.T) {
	ctx := context.Background()
	c := newControlled(t, core.WithLimits(core.PerSecond(10).WithName("s"), core.PerDay(1000).WithName("d")))
	require.NoError(t, c.Block(ctx, "203.0.113.7", time.Hour, "credential stuffing, ticket 42"))
	before := c.takes.Load()

	res := c.allow(t, "203.0.113.7")
	assert.False(t, res.Allowed)
	for i := range res.Len() {
		d := res.Decision(i)
		assert.Equal(t, core.Blocked, d.Reason, d.Limit.Name)
		assert.Equal(t, time.Hour, d.RetryAfter, d.Limit.Name)
		assert.Zero(t, d.Remaining, d.Limit.Name)
	}
	assert.True(t, c.allow(t, "198.51.100.1").Allowed, "another client is not blocked")
	assert.Equal(t, before+1, c.takes.Load(), "only the other client's take reached the store")

	c.clock.Advance(40 * time.Minute)
	assert.Equal(t, 20*time.Minute, c.allow(t, "203.0.113.7").Binding().RetryAfter, "RetryAfter counts down to the end of the block")
	c.clock.Advance(20 * time.Minute)
	assert.True(t, c.allow(t, "203.0.113.7").Allowed, "the block ended")

	require.NoError(t, c.Block(ctx, "203.0.113.7", time.Hour, ""))
	require.False(t, c.allow(t, "203.0.113.7").Allowed)
	require.NoError(t, c.Unblock(ctx, "203.0.113.7"))
	assert.True(t, c.allow(t, "203.0.113.7").Allowed, "unblocked at once on the node that unblocked")
}

// An exempt client is admitted with full quotas without a store call, and
// no lease; a block outranks the exemption.
func TestExempt(t *testing.T) {
	ctx := context.Background()
	c := newControlled(t, core.WithLimits(core.PerHour(1).WithName("h")))
	c.allow(t, "probe")
	require.False(t, c.allow(t, "probe").Allowed, "the quota is spent")
	require.NoError(t, c.Exempt(ctx, "probe", 10*time.Minute, "uptime probe"))
	before := c.takes.Load()

	for range 5 {
		res := c.allow(t, "probe")
		assert.True(t, res.Allowed)
		assert.True(t, res.Exempt)
		assert.EqualValues(t, 1, res.Binding().Remaining, "a full quota")
		assert.Nil(t, res.Lease)
	}
	assert.Equal(t, before, c.takes.Load(), "no store call")

	require.NoError(t, c.Block(ctx, "probe", time.Minute, ""))
	assert.Equal(t, core.Blocked, c.allow(t, "probe").Binding().Reason, "a block outranks an exemption")
	require.NoError(t, c.Unblock(ctx, "probe"))
	assert.True(t, c.allow(t, "probe").Exempt, "the exemption again")

	c.clock.Advance(10 * time.Minute)
	res := c.allow(t, "probe")
	assert.False(t, res.Exempt, "the exemption ended")
	assert.False(t, res.Allowed, "and the spent quota applies again")

	require.NoError(t, c.Exempt(ctx, "probe", 0, "until removed"))
	c.clock.Advance(300 * 24 * time.Hour)
	assert.True(t, c.allow(t, "probe").Exempt, "an exemption without an end lasts")
	require.NoError(t, c.Unexempt(ctx, "probe"))
	assert.False(t, c.allow(t, "probe").Exempt)
}

// An override replaces the limits of its names; a limit kept by name and
// algorithm keeps the client's usage when the override goes.
func TestOverrideRaisesOneClientsLimit(t *testing.T) {
	ctx := context.Background()
	hour := func(n int64) core.Limit { return core.PerHour(n).WithName("h").WithAlgorithm(core.FixedWindow) }
	c := newControlled(t, core.WithLimits(hour(2), core.PerSecond(100).WithName("s")))
	require.NoError(t, c.SetOverride(ctx, "acme", core.Override{Limits: []core.Limit{hour(5)}, Reason: "trial of the pro plan"}))

	for i := range 5 {
		res := c.allow(t, "acme")
		require.True(t, res.Allowed, "take %d", i+1)
		assert.True(t, res.Overridden)
		assert.EqualValues(t, 5, res.Decision(0).Limit.Rate, "the override's limit")
		assert.EqualValues(t, 100, res.Decision(1).Limit.Rate, "the tier's other limit")
	}
	res := c.allow(t, "acme")
	assert.False(t, res.Allowed, "the 6th: the override's quota is spent")
	assert.True(t, res.Overridden)
	other := c.allow(t, "other")
	assert.False(t, other.Overridden, "another client keeps the tier's limits")
	assert.EqualValues(t, 2, other.Decision(0).Limit.Rate)

	got, ok, err := c.Override(ctx, "acme")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "trial of the pro plan", got.Reason)
	assert.Equal(t, []core.Limit{hour(5)}, got.Limits)
	assert.Equal(t, c.clock.Now(), got.At)

	require.NoError(t, c.RemoveOverride(ctx, "acme"))
	res = c.allow(t, "acme")
	assert.False(t, res.Allowed, "the tier's limit, with the usage the override left (5 of 2)")
	assert.False(t, res.Overridden)
	_, ok, err = c.Override(ctx, "acme")
	require.NoError(t, err)
	assert.False(t, ok)
}

func memstoreFor(t *testing.T) core.Store {
	t.Helper()
	s, err := memstore.New()
	require.NoError(t, err)
	return s
}

// An override naming a tier gives the client that tier's limits, under
// its name; one with an end stops at it.
func TestOverrideTier(t *testing.T) {
	ctx := context.Background()
	c := newControlled(t, core.WithTier("free", core.PerHour(1).WithName("h")), core.WithTier("pro", core.PerHour(100).WithName("h")))
	until := c.clock.Now().Add(time.Hour)
	require.NoError(t, c.SetOverride(ctx, "acme", core.Override{Tier: "pro", Until: until}))

	res := c.allow(t, "acme")
	assert.Equal(t, "pro", res.Tier)
	assert.EqualValues(t, 99, res.Binding().Remaining)
	assert.True(t, res.Overridden)
	assert.Equal(t, "free", c.allow(t, "other").Tier)

	c.clock.Advance(time.Hour)
	res = c.allow(t, "acme")
	assert.Equal(t, "free", res.Tier, "the override ended")
	assert.False(t, res.Overridden)
}

// Reset deletes the client's state (all of its limits, or the named ones)
// and the deny cache's denial: the client is admitted again at once.
func TestReset(t *testing.T) {
	ctx := context.Background()
	c := newControlled(t, core.WithLimits(core.PerHour(1).WithName("h"), core.PerDay(1).WithName("d")))
	c.allow(t, "a")
	require.False(t, c.allow(t, "a").Allowed)
	require.False(t, c.allow(t, "a").Allowed, "cached")

	n, err := c.Reset(ctx, "a", "h")
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "one key existed: h's")
	res := c.allow(t, "a")
	assert.False(t, res.Allowed, "d still denies")
	assert.Equal(t, "d", res.Binding().Limit.Name)

	n, err = c.Reset(ctx, "a")
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "d's key; h's was deleted already")
	assert.True(t, c.allow(t, "a").Allowed)

	_, err = c.Reset(ctx, "a", "nope")
	assert.ErrorContains(t, err, `no tier has a limit named "nope"`)
}

// Every method answers ErrNoControls over a store that keeps none; the
// limiter works as ever.
func TestControlsNeedAControlStore(t *testing.T) {
	ctx := context.Background()
	plain := struct{ core.Store }{memstoreFor(t)} // Take only: no ControlStore
	l, err := core.NewLimiter(plain, core.WithLimits(core.PerSecond(1)))
	require.NoError(t, err)
	errs := []error{
		l.Block(ctx, "a", time.Minute, ""), l.Unblock(ctx, "a"), l.Exempt(ctx, "a", 0, ""), l.Unexempt(ctx, "a"),
		l.SetOverride(ctx, "a", core.Override{Tier: "default"}), l.RemoveOverride(ctx, "a"), l.SyncControls(ctx),
	}
	_, _, err = l.Override(ctx, "a")
	errs = append(errs, err)
	_, err = l.Controls(ctx)
	errs = append(errs, err)
	_, err = l.Reset(ctx, "a")
	errs = append(errs, err)
	for i, err := range errs {
		assert.ErrorIs(t, err, core.ErrNoControls, "call %d", i)
	}
	_, err = core.NewControls(plain, "rl")
	assert.ErrorIs(t, err, core.ErrNoControls)
}

// Bad input is refused with an error naming the field, and nothing is
// stored.
func TestControlValidation(t *testing.T) {
	ctx := context.Background()
	c := newControlled(t, core.WithTier("free", core.PerHour(1).WithName("h")), core.WithTier("pro", core.PerHour(100).WithName("h")))
	now := c.clock.Now()
	long := strings.Repeat("x", core.MaxReasonLen+1)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"override without tier or limits", c.SetOverride(ctx, "a", core.Override{}), "set Tier or Limits"},
		{"unknown tier", c.SetOverride(ctx, "a", core.Override{Tier: "gold"}), `Tier "gold" is not a tier`},
		{"unknown limit", c.SetOverride(ctx, "a", core.Override{Limits: []core.Limit{core.PerHour(5).WithName("x")}}), `no tier of the limiter has a limit named "x"`},
		{"invalid limit", c.SetOverride(ctx, "a", core.Override{Limits: []core.Limit{{Name: "h", Rate: 0, Period: time.Hour}}}), "Limits[0]: limit \"h\": Rate must be positive"},
		{"duplicate limit", c.SetOverride(ctx, "a", core.Override{Limits: []core.Limit{core.PerHour(5).WithName("h"), core.PerHour(6).WithName("h")}}), `Limits[1]: duplicate limit Name "h"`},
		{"too many limits", c.SetOverride(ctx, "a", core.Override{Limits: make([]core.Limit, 17)}), "at most 16 Limits, got 17"},
		{"concurrency without one", c.SetOverride(ctx, "a", core.Override{Limits: []core.Limit{core.Concurrent(2).WithName("h")}}), `limit "h" is a Concurrency limit, and the limiter has none`},
		{"until in the past", c.SetOverride(ctx, "a", core.Override{Tier: "pro", Until: now.Add(-time.Second)}), "override Until 2024-12-31T23:59:59Z is not in the future"},
		{"until too far", c.SetOverride(ctx, "a", core.Override{Tier: "pro", Until: now.Add(400 * 24 * time.Hour)}), "is more than 8784h0m0s away"},
		{"reason too long", c.SetOverride(ctx, "a", core.Override{Tier: "pro", Reason: long}), "reason is 257 bytes, more than 256"},
		{"reason not UTF-8", c.Block(ctx, "a", time.Hour, "\xff"), "reason is not valid UTF-8"},
		{"block of 0", c.Block(ctx, "a", 0, ""), "block duration must be in (0, 8784h0m0s], got 0s"},
		{"block too long", c.Block(ctx, "a", 367*24*time.Hour, ""), "block duration must be in"},
		{"negative exemption", c.Exempt(ctx, "a", -time.Second, ""), "exemption duration must be in"},
		{"operator too long", c.Block(core.WithOperator(ctx, strings.Repeat("o", 65)), "a", time.Hour, ""), "operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Error(t, tt.err)
			assert.Contains(t, tt.err.Error(), tt.want)
		})
	}
	list, err := c.Controls(ctx)
	require.NoError(t, err)
	assert.Empty(t, list, "nothing was stored")
}

// A record is at most 4 KiB encoded; the admin API refuses a bigger one
// and a client id that is no safe identity.
func TestControlsRefuseOversizedRecordsAndUnsafeIDs(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock()
	ctl, err := core.NewControls(newControlStore(t, clock.Now), "ctl")
	require.NoError(t, err)
	zone, err := time.LoadLocation("America/Argentina/ComodRivadavia")
	require.NoError(t, err)
	var limits []core.Limit
	for i := range 16 {
		name := strings.Repeat("n", 30) + string(rune('a'+i))
		limits = append(limits, core.PerCalendarMonth(1000, zone).WithName(name).WithLockout(core.Lockout{
			After: 10, Within: 15 * time.Minute, For: 15 * time.Minute, Multiplier: 2, Max: 24 * time.Hour, Cooldown: 24 * time.Hour}))
	}

	err = ctl.SetOverride(ctx, "a", core.Override{Limits: limits, Reason: strings.Repeat("r", core.MaxReasonLen)})
	require.Error(t, err)
	assert.Regexp(t, `control record of "a": \d+ bytes encoded, more than 4096`, err.Error())

	assert.ErrorContains(t, ctl.Block(ctx, "{a}", time.Hour, ""), "is not a safe identity")
	assert.ErrorContains(t, ctl.Block(ctx, "", time.Hour, ""), "is not a safe identity")
	assert.NoError(t, ctl.Block(ctx, core.SafeIdentity(strings.Repeat("k", 100)), time.Hour, ""), "a hashed identity is safe")
}

// List shows what is in force, by safe identity, with who set it and why;
// the admin API and the limiter see one state.
func TestControlsList(t *testing.T) {
	ctx := core.WithOperator(context.Background(), "alice")
	c := newControlled(t, core.WithLimits(core.PerHour(1).WithName("h")))
	long := strings.Repeat("k", 100)
	require.NoError(t, c.Block(ctx, long, time.Hour, "abuse"))
	require.NoError(t, c.Exempt(ctx, "probe", 0, "uptime"))
	require.NoError(t, c.SetOverride(ctx, "acme", core.Override{Limits: []core.Limit{core.PerHour(9).WithName("h")}, Until: c.clock.Now().Add(2 * time.Hour)}))
	require.NoError(t, c.Block(ctx, "acme", time.Minute, "short"))
	c.clock.Advance(time.Minute) // acme's block ends; its override stays

	list, err := c.Controls(ctx)
	require.NoError(t, err)
	require.Len(t, list, 3)
	t0 := storetest.Start()
	acme, probe, hashed := list[0], list[1], list[2] // by ID: '~' sorts after letters
	assert.Equal(t, "acme", acme.ID)
	require.NotNil(t, acme.Override)
	assert.Nil(t, acme.Block, "acme's block ended")
	assert.Equal(t, t0.Add(2*time.Hour), acme.Override.Until)
	assert.Equal(t, "alice", acme.Override.By)
	assert.Equal(t, "probe", probe.ID)
	require.NotNil(t, probe.Exempt)
	assert.Equal(t, core.Exempt{Reason: "uptime", By: "alice", At: t0}, *probe.Exempt)
	assert.Equal(t, core.SafeIdentity(long), hashed.ID)
	require.NotNil(t, hashed.Block)
	assert.Equal(t, core.Block{Until: t0.Add(time.Hour), Reason: "abuse", By: "alice", At: t0}, *hashed.Block)
	assert.WithinDuration(t, t0.Add(time.Hour), hashed.Expires, 0) // the store may give it in another zone

	admin, err := core.NewControls(c.probe, "ctl")
	require.NoError(t, err)
	fromAdmin, err := admin.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, list, fromAdmin, "the admin API reads the limiter's space")
}

func TestOperatorFromContext(t *testing.T) {
	assert.Equal(t, "", core.Operator(context.Background()))
	assert.Equal(t, "alice", core.Operator(core.WithOperator(context.Background(), "alice")))
}

// Charging by outcome applies the controls too: an exempt client is
// checked admitted with nothing to charge after the work, a blocked one
// denied, an overridden one checked and charged against its own limits.
func TestCheckAndChargeApplyControls(t *testing.T) {
	ctx := context.Background()
	hour := func(n int64) core.Limit { return core.PerHour(n).WithName("h").WithAlgorithm(core.FixedWindow) }
	c := newControlled(t, core.WithLimits(hour(1)))
	require.NoError(t, c.Exempt(ctx, "probe", 0, ""))
	require.NoError(t, c.Block(ctx, "mallory", time.Hour, ""))
	require.NoError(t, c.SetOverride(ctx, "acme", core.Override{Limits: []core.Limit{hour(3)}}))
	before := c.takes.Load()

	res, charge, err := c.Check(ctx, core.Request{Identity: "probe", Cost: 1})
	require.NoError(t, err)
	assert.True(t, res.Allowed && res.Exempt)
	assert.Zero(t, charge.Cost, "nothing to charge after the work")
	res, charge, err = c.Check(ctx, core.Request{Identity: "mallory", Cost: 1})
	require.NoError(t, err)
	assert.Equal(t, core.Blocked, res.Binding().Reason)
	assert.Zero(t, charge.Cost)
	assert.Equal(t, before, c.takes.Load(), "no store call for either")

	for i := range 3 {
		res, charge, err = c.Check(ctx, core.Request{Identity: "acme", Cost: 1})
		require.NoError(t, err)
		require.True(t, res.Allowed && res.Overridden, "check %d", i+1)
		charged, err := c.Charge(ctx, charge)
		require.NoError(t, err)
		require.True(t, charged.Allowed && charged.Overridden, "charge %d against the override", i+1)
	}
	res, _, err = c.Check(ctx, core.Request{Identity: "acme", Cost: 1})
	require.NoError(t, err)
	assert.False(t, res.Allowed, "the override's 3 are spent")

	require.NoError(t, c.Exempt(ctx, "acme", 0, "")) // between a check and its charge
	charged, err := c.Charge(ctx, core.Request{Identity: "acme", Cost: 1, Tier: "default"})
	require.NoError(t, err)
	assert.True(t, charged.Exempt, "exempt since the check: not charged")
}

// A denial cached under an override answers only while the override
// applies: when it ends, the client's requests go to the store under its
// tier's limits, without waiting for the cached Retry-After.
func TestOverrideEndReleasesItsCachedDenial(t *testing.T) {
	ctx := context.Background()
	hour := func(n int64) core.Limit { return core.PerHour(n).WithName("h").WithAlgorithm(core.FixedWindow) }
	c := newControlled(t, core.WithLimits(hour(100)))
	require.NoError(t, c.SetOverride(ctx, "trial", core.Override{Limits: []core.Limit{hour(1)}, Until: c.clock.Now().Add(time.Minute)}))
	c.allow(t, "trial")
	denied := c.allow(t, "trial")
	require.False(t, denied.Allowed)
	require.Greater(t, denied.Binding().RetryAfter, 30*time.Minute, "a denial cached for most of an hour")

	c.clock.Advance(time.Minute)
	res := c.allow(t, "trial")
	assert.True(t, res.Allowed, "the override ended: the tier's 100 an hour")
	assert.False(t, res.Overridden)
}

// lateAnswer holds the store's answer to a take of "x" until released:
// the reply of a take in flight while the node reads a change.
type lateAnswer struct {
	*controlProbe
	answered chan struct{} // closed when the store has answered
	release  chan struct{}
}

func (s *lateAnswer) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	ds, err := s.controlProbe.Take(ctx, dst, keys, limits, cost)
	if strings.Contains(keys[0], "{x}") && s.answered != nil {
		close(s.answered)
		<-s.release
	}
	return ds, err
}

// A denial the store gave before a reset, whose answer arrives after the
// node read the reset, is not cached: it would deny the reset client until
// its Retry-After.
func TestDenialInFlightDuringAResetIsNotCached(t *testing.T) {
	logtest.CaptureDefault(t, slog.LevelInfo)
	ctx := context.Background()
	clock := storetest.NewClock()
	store := &lateAnswer{controlProbe: newControlProbe(newControlStore(t, clock.Now))}
	l, err := core.NewLimiter(store, core.WithLimits(core.PerHour(1).WithName("h")))
	require.NoError(t, err)
	require.NoError(t, l.Unexempt(ctx, "first-change")) // past generation 0, whose reads are full
	_, err = l.Allow(ctx, "x")
	require.NoError(t, err)

	store.answered, store.release = make(chan struct{}), make(chan struct{})
	denied := make(chan core.Result)
	go func() {
		res, _ := l.Allow(ctx, "x")
		denied <- res
	}()
	<-store.answered // the store denied; the answer is on its way
	_, err = l.Reset(ctx, "x")
	require.NoError(t, err)
	close(store.release)
	require.False(t, (<-denied).Allowed)

	store.answered = nil
	assert.True(t, allow(t, l, "x").Allowed, "the reset applies: no denial of before it was cached")
}

// Operators changing different clients at once, while takes run, lose no
// change: every client ends with what its operator set last.
func TestControlsConcurrentOperators(t *testing.T) {
	ctx := context.Background()
	c := newControlled(t, core.WithLimits(core.PerSecond(1000).WithName("s")))
	stop := make(chan struct{})
	var takers, operators sync.WaitGroup
	for g := range 8 {
		takers.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Allow(ctx, fmt.Sprintf("client-%d", (g+i)%8)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for g := range 8 {
		operators.Go(func() {
			id := fmt.Sprintf("client-%d", g)
			for range 50 {
				if err := c.Block(ctx, id, time.Hour, ""); err != nil {
					t.Error(err)
				}
				if err := c.Unblock(ctx, id); err != nil {
					t.Error(err)
				}
			}
			if g%2 == 0 {
				assert.NoError(t, c.Block(ctx, id, time.Hour, "last"))
			}
		})
	}
	operators.Wait()
	close(stop)
	takers.Wait()

	list, err := c.Controls(ctx)
	require.NoError(t, err)
	var blocked []string
	for _, cc := range list {
		blocked = append(blocked, cc.ID)
	}
	assert.Equal(t, []string{"client-0", "client-2", "client-4", "client-6"}, blocked)
	for g := range 8 {
		res := c.allow(t, fmt.Sprintf("client-%d", g))
		assert.Equal(t, g%2 == 0, res.Binding().Reason == core.Blocked, "client-%d", g)
	}
}

// An override's plan is built from the tiers in force: after SetTiers the
// overridden client gets the new tier's other limits, with the override's
// in place.
func TestOverrideFollowsSetTiers(t *testing.T) {
	ctx := context.Background()
	c := newControlled(t, core.WithLimits(core.PerHour(2).WithName("h"), core.PerSecond(100).WithName("s")))
	require.NoError(t, c.SetOverride(ctx, "acme", core.Override{Limits: []core.Limit{core.PerHour(5).WithName("h")}}))
	res := c.allow(t, "acme")
	require.EqualValues(t, 100, res.Decision(1).Limit.Rate)

	require.NoError(t, c.SetTiers([]core.Tier{{Name: "default", Limits: []core.Limit{core.PerHour(2).WithName("h"), core.PerSecond(50).WithName("s")}}}, ""))
	res = c.allow(t, "acme")
	assert.True(t, res.Overridden)
	assert.EqualValues(t, 5, res.Decision(0).Limit.Rate, "the override's")
	assert.EqualValues(t, 50, res.Decision(1).Limit.Rate, "the new tiers'")
}
