package core_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// A client whose tier changes keeps its usage: state is keyed by limit
// name, read with the new tier's numbers (GCRA keeps it as time owed).
func TestTierChangeKeepsTheClientsUsage(t *testing.T) {
	l := core.MustNewLimiter(frozenStore(), core.WithTiers(core.RecipeTiers()...))
	ctx := context.Background()

	res, err := l.Take(ctx, core.Request{Identity: "upgrader", Tier: "free", Cost: 50})
	require.NoError(t, err)
	require.Equal(t, int64(50), res.Binding().Remaining, "free: 50 of 100 used, 5 s owed at 10/s")

	res, err = l.Take(ctx, core.Request{Identity: "upgrader", Tier: "pro", Cost: 0})
	require.NoError(t, err)
	assert.Equal(t, int64(500), res.Binding().Remaining, "pro: the same 5 s owed is 500 of 1000 at 100/s")
}
