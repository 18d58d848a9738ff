package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

var middlewareNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestLimiter returns a limiter over a memstore frozen at middlewareNow.
func newTestLimiter(t *testing.T, opts ...core.Option) *core.Limiter {
	t.Helper()
	store, err := memstore.New(memstore.WithClock(func() time.Time { return middlewareNow }))
	require.NoError(t, err)
	l, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	return l
}
