package core_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// While the plans database fails, a customer keeps the last tier it had
// for WithTierStale past the answer's TTL (default an hour), then gets
// the default tier; TierErr says which. Before, a paying customer was on
// the default tier from the first failure.
func TestAFailingResolverKeepsTheLastKnownTier(t *testing.T) {
	tests := []struct {
		name      string
		opts      []core.Option
		after     time.Duration // since the answer, TTL 3 s
		wantTier  string
		wantStale bool
	}{
		{"default window, just expired", nil, 4 * time.Second, "pro", true},
		{"default window, an hour on", nil, 3*time.Second + time.Hour - time.Second, "pro", true},
		{"default window, past it", nil, 3*time.Second + time.Hour, "free", false},
		{"WithTierStale(1m), within", []core.Option{core.WithTierStale(time.Minute)}, 50 * time.Second, "pro", true},
		{"WithTierStale(1m), past it", []core.Option{core.WithTierStale(time.Minute)}, 3*time.Second + time.Minute, "free", false},
		{"WithTierStale(0): none", []core.Option{core.WithTierStale(0)}, 4 * time.Second, "free", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logtest.CaptureDefault(t, slog.LevelWarn) // the failure log
			clock := newFakeClock()
			db := newPlanDB(map[string]string{"acme-key": "pro"})
			l := tieredAt(t, clock, db, tt.opts...)
			ctx := context.Background()
			res, err := l.Take(ctx, core.Request{Identity: "acme", TierKey: "acme-key", Cost: 0})
			require.NoError(t, err)
			require.Equal(t, "pro", res.Tier)

			db.failWith(errPlansDown)
			clock.Advance(tt.after)
			res, err = l.Take(ctx, core.Request{Identity: "acme", TierKey: "acme-key", Cost: 1})
			require.NoError(t, err)
			assert.Equal(t, tt.wantTier, res.Tier)
			assert.ErrorIs(t, res.TierErr, errPlansDown)
			assert.Equal(t, tt.wantStale, errors.Is(res.TierErr, core.ErrTierStale))
		})
	}
}

// A resolver that does not answer within WithTierTimeout counts as failed:
// the last known tier is kept, and TierErr wraps ErrTierTimeout.
func TestWithTierTimeoutBoundsTheResolver(t *testing.T) {
	logtest.CaptureDefault(t, slog.LevelWarn) // the failure log
	clock := newFakeClock()
	db := newPlanDB(map[string]string{"acme-key": "pro"})
	l := tieredAt(t, clock, db, core.WithTimeout(time.Minute), core.WithTierTimeout(20*time.Millisecond))
	ctx := context.Background()
	_, err := l.Take(ctx, core.Request{Identity: "acme", TierKey: "acme-key", Cost: 0})
	require.NoError(t, err)

	gate := make(chan struct{})
	t.Cleanup(func() { close(gate) })
	db.mu.Lock()
	db.gate = gate
	db.mu.Unlock()
	clock.Advance(time.Minute)
	start := time.Now()
	res, err := l.Take(ctx, core.Request{Identity: "acme", TierKey: "acme-key", Cost: 1})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 10*time.Second, "bounded by 20 ms, not the limiter's minute (generous margin)")
	assert.Equal(t, "pro", res.Tier)
	assert.ErrorIs(t, res.TierErr, core.ErrTierTimeout)
	assert.ErrorIs(t, res.TierErr, core.ErrTierStale)
}

// A resolver failure is logged by default (the limiter's failure log, no
// observer configured) and by a SlogObserver, with the tier applied.
func TestAResolverFailureIsLogged(t *testing.T) {
	for _, observed := range []bool{false, true} {
		t.Run(map[bool]string{false: "default failure log", true: "SlogObserver"}[observed], func(t *testing.T) {
			buf := logtest.CaptureDefault(t, slog.LevelWarn)
			db := newPlanDB(map[string]string{})
			db.failWith(errPlansDown)
			var opts []core.Option
			if observed {
				opts = append(opts, core.WithObserver(core.NewSlogObserver(slog.Default())))
			}
			l := tieredAt(t, newFakeClock(), db, opts...)
			_, err := l.Take(context.Background(), core.Request{Identity: "acme", TierKey: "acme-key", Cost: 1})
			require.NoError(t, err)
			lines := logtest.Lines(buf)
			require.Len(t, lines, 1)
			assert.Contains(t, lines[0], `msg="ratelimit: tier resolver failed"`)
			assert.Contains(t, lines[0], "tier=free stale=false")
			assert.Contains(t, lines[0], "plans database down")
			assert.NotContains(t, lines[0], "acme-key")
		})
	}
}

// The resolver's options need a resolver; a negative window or a zero
// timeout is an error naming the option.
func TestTierResolverOptionsAreChecked(t *testing.T) {
	resolver := core.WithTierResolver(newPlanDB(nil).resolve, 0, 0)
	tests := []struct {
		name string
		opts []core.Option
		want string
	}{
		{"stale without resolver", []core.Option{core.WithTierStale(time.Minute)}, "WithTierStale needs WithTierResolver"},
		{"timeout without resolver", []core.Option{core.WithTierTimeout(time.Second)}, "WithTierTimeout needs WithTierResolver"},
		{"key identity without resolver", []core.Option{core.WithTierKeyIdentity()}, "WithTierKeyIdentity needs WithTierResolver"},
		{"negative stale", []core.Option{resolver, core.WithTierStale(-time.Second)}, "WithTierStale: window must not be negative"},
		{"zero timeout", []core.Option{resolver, core.WithTierTimeout(0)}, "WithTierTimeout: timeout must be positive"},
		{"stale twice", []core.Option{resolver, core.WithTierStale(0), core.WithTierStale(time.Hour)}, "WithTierStale given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := core.NewLimiter(frozenStore(), append([]core.Option{core.WithLimits(core.PerSecond(1))}, tt.opts...)...)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// With WithTierKeyIdentity, a key the resolver knows is its own client
// (keyed as keyfunc.Header keys it), an unknown key is the address's:
// inventing keys mints no quota, and two known keys behind one address do
// not share one.
func TestWithTierKeyIdentity(t *testing.T) {
	db := newPlanDB(map[string]string{"acme-key": "pro", "globex-key": "free"})
	l := tieredAt(t, newFakeClock(), db, core.WithTierKeyIdentity())
	ctx := context.Background()
	take := func(tierKey string) core.Result {
		res, err := l.Take(ctx, core.Request{Identity: "198.51.100.4", TierKey: tierKey, Cost: 1})
		require.NoError(t, err)
		return res
	}
	for i := range 5 {
		res := take("invented-" + string(rune('a'+i)))
		require.True(t, res.Allowed)
		require.Equal(t, "free", res.Tier)
	}
	assert.False(t, take("invented-z").Allowed, "the address's free quota is used up")
	res := take("globex-key")
	assert.True(t, res.Allowed, "a known free key has its own quota")
	assert.Equal(t, int64(4), res.Binding().Remaining)
	res = take("acme-key")
	assert.True(t, res.Allowed)
	assert.Equal(t, "pro", res.Tier)

	var seen core.Request
	l2 := tieredAt(t, newFakeClock(), db, core.WithTierKeyIdentity(), core.WithObserver(observerFunc(func(req core.Request, _ core.Result) { seen = req })))
	_, err := l2.Take(ctx, core.Request{Identity: "198.51.100.4", TierKey: "acme-key", Cost: 1})
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-API-Key", "acme-key")
	want, err := keyfunc.Must(keyfunc.Header("X-API-Key"))(r)
	require.NoError(t, err)
	assert.Equal(t, want, seen.Identity)
}

// Unnamed limits that differ between tiers get different names, so a
// client changing tier would start from a full quota: NewLimiter warns.
func TestUnnamedLimitsThatDifferBetweenTiersWarn(t *testing.T) {
	madrid, err := time.LoadLocation("Europe/Madrid")
	require.NoError(t, err)
	tests := []struct {
		name  string
		tiers []core.Tier
		warn  string
	}{
		{"unnamed daily quotas", []core.Tier{
			{Name: "free", Limits: []core.Limit{core.PerCalendarDay(1000, madrid)}},
			{Name: "pro", Limits: []core.Limit{core.PerCalendarDay(100000, madrid)}},
		}, `tiers "free" and "pro" have unnamed calendar_window limits of one period with different names ("1000-per-day-Europe.Madrid" and "100000-per-day-Europe.Madrid")`},
		{"unnamed GCRA limits", []core.Tier{
			{Name: "free", Limits: []core.Limit{core.PerSecond(10)}},
			{Name: "pro", Limits: []core.Limit{core.PerSecond(100)}},
		}, `"10-per-1s" and "100-per-1s"`},
		{"named limits", []core.Tier{
			{Name: "free", Limits: []core.Limit{core.PerSecond(10).WithName("api")}},
			{Name: "pro", Limits: []core.Limit{core.PerSecond(100).WithName("api")}},
		}, ""},
		{"equal unnamed limits", []core.Tier{
			{Name: "free", Limits: []core.Limit{core.PerSecond(10)}},
			{Name: "pro", Limits: []core.Limit{core.PerSecond(10), core.PerDay(5)}},
		}, ""},
		{"different periods", []core.Tier{
			{Name: "free", Limits: []core.Limit{core.PerSecond(10)}},
			{Name: "pro", Limits: []core.Limit{core.PerMinute(100)}},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := logtest.CaptureDefault(t, slog.LevelWarn)
			_, err := core.NewLimiter(frozenStore(), core.WithTiers(tt.tiers...))
			require.NoError(t, err)
			if tt.warn == "" {
				assert.Empty(t, logtest.Lines(buf))
				return
			}
			lines := logtest.Lines(buf)
			require.Len(t, lines, 1)
			assert.Contains(t, lines[0], "usage")
			assert.Contains(t, strings.ReplaceAll(lines[0], `\"`, `"`), tt.warn)
		})
	}
}
