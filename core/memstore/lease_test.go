package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// The state of a concurrency key lives exactly as long as its leases, as
// the Redis sorted set does: the last release removes the key, and an
// abandoned lease's key is gone once it expired.
func TestLeaseKeysLiveAsLongAsTheirLeases(t *testing.T) {
	s, clock := newTestStore(t)
	ctx := context.Background()
	limits := []core.Limit{core.Concurrent(2).WithLeaseTTL(10 * time.Second)}
	keys := []string{"rl:{alice}:2-in-flight:i"}
	for _, lease := range []string{"a", "b"} {
		_, err := s.TakeLease(ctx, nil, keys, limits, 1, lease)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, s.Len())
	require.NoError(t, s.Release(ctx, keys[0], limits[0], "a"))
	assert.Equal(t, 1, s.Len(), "a lease is left")
	require.NoError(t, s.Release(ctx, keys[0], limits[0], "b"))
	assert.Equal(t, 0, s.Len(), "the last release removes the key")

	_, err := s.TakeLease(ctx, nil, keys, limits, 1, "c")
	require.NoError(t, err)
	clock.Advance(10 * time.Second)
	held, err := s.Renew(ctx, keys[0], limits[0], "c")
	require.NoError(t, err)
	assert.False(t, held, "expired at exactly its TTL")
	clock.Advance(time.Millisecond)
	require.NoError(t, s.Release(ctx, keys[0], limits[0], "c"))
	assert.Equal(t, 1, s.Len(), "the release of a lease not held leaves its tombstone")
	clock.Advance(10*time.Second + time.Millisecond)
	_, err = s.Take(ctx, nil, keys, limits, 0) // a peek touches the key
	require.NoError(t, err)
	assert.Equal(t, 0, s.Len(), "the tombstone expired with its TTL; the key was removed when touched")

	_, err = s.Renew(ctx, keys[0], core.PerSecond(1), "c")
	assert.Error(t, err, "Renew needs a Concurrency limit")
}
