package core_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// countedStore counts the takes that reach a memstore; embedding keeps
// its Capabilities (its Clock, NonBlocking and Leases).
type countedStore struct {
	*memstore.Store
	takes atomic.Int64
}

func (s *countedStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.takes.Add(1)
	return s.Store.Take(ctx, dst, keys, limits, cost)
}

// The trap this closes: a test gives memstore a fake clock, and the
// limiter's deny cache kept a denial for its RetryAfter of real time, so a
// test that advanced the fake clock past it was still denied.
func TestDenyCacheFollowsTheStoresInjectedClock(t *testing.T) {
	clk := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	ms, err := memstore.New(memstore.WithClock(clk.Now))
	require.NoError(t, err)
	store := &countedStore{Store: ms}
	l, err := core.NewLimiter(store, core.WithLimits(core.PerSecond(1).WithName("s")))
	require.NoError(t, err)
	ctx := context.Background()
	allow := func() core.Result {
		t.Helper()
		res, err := l.Allow(ctx, "a")
		require.NoError(t, err)
		return res
	}

	require.True(t, allow().Allowed, "the first request of the second")
	denied := allow()
	require.False(t, denied.Allowed)
	require.Equal(t, time.Second, denied.Binding().RetryAfter)
	require.Equal(t, int64(2), store.takes.Load())

	clk.Advance(500 * time.Millisecond)
	res := allow()
	assert.False(t, res.Allowed, "still denied half a second later")
	assert.Equal(t, int64(2), store.takes.Load(), "answered by the deny cache")

	clk.Advance(500 * time.Millisecond)
	assert.True(t, allow().Allowed, "a second of the store's clock later the deny cache lets the request through")
	assert.Equal(t, int64(3), store.takes.Load())
}
