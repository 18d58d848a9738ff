package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// A space without a write for MaxControlAge is gone, as its Redis keys
// would be: it starts again at a generation of the clock, above any it
// gave before, so a reader of the lost space reads everything again, even
// after more writes than it had seen.
func TestControlSpaceExpiresLikeItsKeys(t *testing.T) {
	s, clock := newTestStore(t)
	ctx := context.Background()
	var seen uint64
	for range 5 {
		g, err := s.SetControl(ctx, "rl", "a", []byte("A"), time.Time{})
		require.NoError(t, err)
		seen = g
	}
	clock.Advance(core.MaxControlAge + time.Microsecond)
	ch, err := s.Controls(ctx, "rl", seen)
	require.NoError(t, err)
	assert.True(t, ch.Full && ch.Gen == 0 && ch.Records == nil, "the space is gone: %+v", ch)
	assert.True(t, clock.Now().Equal(ch.Now))

	for range 10 {
		_, err = s.TouchControl(ctx, "rl", "b")
		require.NoError(t, err)
	}
	ch, err = s.Controls(ctx, "rl", seen)
	require.NoError(t, err)
	assert.True(t, ch.Full, "the old generation is before the new space: a full read")
	assert.Empty(t, ch.Records)
	assert.Greater(t, ch.Gen, seen+10)
}

// The space lives MaxControlAge after its last write, not its first.
func TestControlSpaceLivesFromItsLastWrite(t *testing.T) {
	s, clock := newTestStore(t)
	ctx := context.Background()
	_, err := s.SetControl(ctx, "rl", "a", []byte("A"), time.Time{})
	require.NoError(t, err)
	clock.Advance(core.MaxControlAge / 2)
	g, err := s.TouchControl(ctx, "rl", "b")
	require.NoError(t, err)
	clock.Advance(core.MaxControlAge/2 + time.Hour)
	ch, err := s.Controls(ctx, "rl", g)
	require.NoError(t, err)
	assert.False(t, ch.Full)
	assert.Equal(t, g, ch.Gen)
}

// DeleteKeys counts the entries that hold live state: an entry whose
// state expired is deleted but not counted, as Redis would have dropped
// the key already.
func TestDeleteKeysCountsLiveEntries(t *testing.T) {
	s, clock := newTestStore(t)
	short := core.PerSecond(10).WithName("short")
	long := core.PerHour(10).WithName("long")
	keys := []string{"rl:{c}:short:g", "rl:{c}:long:g", "rl:{c}:lockout:x"}
	takeOne(t, s, keys[0], short, 1)
	takeOne(t, s, keys[1], long, 1)
	clock.Advance(time.Second) // short's state expired; its entry is still there
	require.Equal(t, 2, s.Len())

	n, err := s.DeleteKeys(context.Background(), keys)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Zero(t, s.Len(), "both entries are gone")
}
