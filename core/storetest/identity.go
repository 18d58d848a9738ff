package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// hostileIdentities are client identities chosen to break keys: hash-tag
// braces, control bytes, unicode, a 10 KB string, the longest verbatim
// identity and one byte more, an identity that looks like a hashed one,
// and composite identities that differ only in where the parts split.
func hostileIdentities() []string {
	return []string{
		"plain",
		"{", "}", "{}", "{a}", "a}{b",
		"", " ", "a b", "\x00", "\r\n", "\x1b[2J", "\xff\xfe",
		"ключ", "日本語", "😀",
		strings.Repeat("x", 10<<10),
		strings.Repeat("y", core.MaxIdentityLen),
		strings.Repeat("y", core.MaxIdentityLen+1),
		"~", core.SafeIdentity("{"),
		"a:b", core.Identity("a:b", "c"), core.Identity("a", "b:c"),
		core.Identity("a", "b", "c"), core.Identity("a|b", "c"),
	}
}

// testIdentities charges each hostile identity a different cost on all
// five algorithms at once, then peeks them all: each must see only its own
// charge. Two identities sharing state would see both.
func testIdentities(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock.Now)
	kb := UniqueKeyBuilder(t)
	var limits []core.Limit
	for _, a := range allAlgorithms() {
		limits = append(limits, core.PerHour(10).WithAlgorithm(a.alg))
	}
	ids := hostileIdentities()
	costs := make([]int64, len(ids))
	clients := make([]client, len(ids))
	seen := make(map[string]int)
	for i, id := range ids {
		clients[i] = newClient(store, kb, id, limits)
		for _, k := range clients[i].keys {
			j, dup := seen[k]
			require.False(t, dup, "identities %q and %q share key %q", short(ids[j]), short(id), k)
			seen[k] = i
		}
		costs[i] = int64(i%9 + 1)
		ds := clients[i].take(t, costs[i])
		require.True(t, allDecisionsAllowed(ds), "identity %q: take of cost %d on a fresh client denied", short(id), costs[i])
	}
	for i, id := range ids {
		for j, d := range clients[i].take(t, 0) {
			assert.Equal(t, 10-costs[i], d.Remaining, "identity %q, %s: Remaining after its own take of %d only",
				short(id), limits[j].Algorithm, costs[i])
		}
	}
}

// short returns id quoted, cut to 40 bytes, for messages.
func short(id string) string {
	if len(id) <= 40 {
		return id
	}
	return fmt.Sprintf("%s... (%d bytes)", id[:40], len(id))
}
