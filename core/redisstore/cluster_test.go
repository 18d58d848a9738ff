package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestHostileIdentitiesOnCluster takes two limits (two keys) per identity on
// the cluster: identities that try to break out of the hash tag, choose a
// slot or bloat memory must neither hit CROSSSLOT nor share state.
func TestHostileIdentitiesOnCluster(t *testing.T) {
	client := redistest.Cluster(t).Client(t)
	store, kb := newStore(t, client)
	ctx := context.Background()
	limits := []core.Limit{
		core.PerMinute(1).WithName("gcra"),
		core.PerMinute(1).WithName("fixed").WithAlgorithm(core.FixedWindow),
	}
	ids := []string{
		"{", "}", "{}", "{a}", "a}{b", "}{", "{tag}rest", "x{y}z",
		"", " ", "a b", "\x00", "\x00\x01\x1f\x7f", "a\r\nb", "\xff\xfe",
		"ünïcødé", "日本語", "🙂", strings.Repeat("x", 10<<10), strings.Repeat("{", 65),
		"plain", "plain:with@safe/bytes+=!*", // verbatim identities, for contrast
	}

	for _, id := range ids {
		keys := kb.AppendKeys(nil, id, limits)
		for _, key := range keys {
			assert.NotContains(t, key[strings.IndexByte(key, '{')+1:strings.IndexByte(key, '}')], "{", "hash tag of %q", id)
			slot, err := client.ClusterKeySlot(ctx, key).Result()
			require.NoError(t, err)
			want, err := client.ClusterKeySlot(ctx, core.SafeIdentity(id)).Result()
			require.NoError(t, err)
			assert.Equal(t, want, slot, "key %.80q is slotted by SafeIdentity(%.40q)", key, id)
		}

		got, err := store.Take(ctx, nil, keys, limits, 1)
		require.NoError(t, err, "identity %.40q", id)
		assert.Equal(t, []outcome{allowed(0, time.Minute), allowed(0, got[1].ResetAfter)}, outcomesOf(got),
			"identity %.40q starts from fresh state", id)
	}

	for _, id := range ids {
		got, err := store.Take(ctx, nil, kb.AppendKeys(nil, id, limits), limits, 1)
		require.NoError(t, err)
		assert.False(t, got[0].Allowed, "identity %.40q kept its own state", id)
	}
}
