package policy_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// frozen is the time of the memory store of frozenLimiter: it never moves,
// so that every count is exact.
var frozen = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// frozenLimiter returns a limiter over a memory store whose clock stands
// still at frozen.
func frozenLimiter(t *testing.T, opts ...core.Option) *core.Limiter {
	t.Helper()
	store, err := memstore.New(memstore.WithClock(func() time.Time { return frozen }))
	require.NoError(t, err)
	l, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	return l
}

// allow takes n requests of identity from l and returns the last result.
func allow(t *testing.T, l *core.Limiter, identity string, n int) core.Result {
	t.Helper()
	var res core.Result
	for range n {
		var err error
		res, err = l.Allow(context.Background(), identity)
		require.NoError(t, err)
	}
	return res
}
