package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// The keys a limiter passes to the memory store are rebuilt in one buffer
// for every call; a store that kept them without copying would see its
// clients' keys change under it. Many clients, each taken twice, must each
// keep their own state.
func TestMemoryStoreKeysOutliveTheCall(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerMinute(1).WithName("m"), core.PerHour(10).WithName("h")),
		core.WithDenyCache(0))
	ctx := context.Background()
	const clients = 200
	for i := range clients {
		res, err := l.Allow(ctx, fmt.Sprintf("client-%d-%s", i, string(rune('a'+i%26))))
		require.NoError(t, err)
		require.True(t, res.Allowed, "client %d: first request", i)
	}
	for i := range clients {
		res, err := l.Allow(ctx, fmt.Sprintf("client-%d-%s", i, string(rune('a'+i%26))))
		require.NoError(t, err)
		assert.False(t, res.Allowed, "client %d: second request in the minute", i)
	}
}
