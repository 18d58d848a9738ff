package redistest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestStandaloneClientsShareOneServer(t *testing.T) {
	srv := redistest.Standalone(t)
	clients := srv.Clients(t, 3)
	ctx := context.Background()
	key := redistest.Prefix(t) + ":k"

	for i, c := range clients {
		require.NoError(t, c.Incr(ctx, key).Err(), "client %d", i)
	}
	require.NoError(t, clients[0].PExpire(ctx, key, time.Minute).Err())

	got, err := clients[2].Get(ctx, key).Int()
	require.NoError(t, err)
	assert.Equal(t, 3, got)
	assert.Same(t, srv, redistest.Standalone(t), "the server is shared by the test binary")
}

func TestStandaloneHasNoPersistence(t *testing.T) {
	srv := redistest.Standalone(t)
	if !srv.Started() {
		t.Skip("REDIS_URL server: its configuration is not ours to check")
	}
	cfg, err := srv.Client(t).ConfigGet(context.Background(), "*").Result()
	require.NoError(t, err)

	assert.Equal(t, "", cfg["save"])
	assert.Equal(t, "no", cfg["appendonly"])
	assert.Equal(t, "127.0.0.1", cfg["bind"])
}

func TestClusterServesEverySlot(t *testing.T) {
	start := time.Now()
	cluster := redistest.Cluster(t)
	t.Logf("cluster ready after %s", time.Since(start))
	client := cluster.Client(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)

	// 64 hash tags spread over the slots of all three masters.
	for i := range 64 {
		key := fmt.Sprintf("%s:{%d}:k", prefix, i)
		require.NoError(t, client.Set(ctx, key, i, time.Minute).Err(), key)
	}

	keys := redistest.ScanKeys(t, client, prefix+":*")
	assert.Len(t, keys, 64)
	if cluster.Started() {
		assert.Len(t, cluster.Addrs(), 3)
	}
}

func TestClusterMultiKeyScriptOnOneHashTag(t *testing.T) {
	client := redistest.Cluster(t).Client(t)
	prefix := redistest.Prefix(t)
	keys := []string{prefix + ":{id}:a", prefix + ":{id}:b"}
	script := "redis.call('SET', KEYS[1], 1, 'PX', 60000); redis.call('SET', KEYS[2], 2, 'PX', 60000); return 'ok'"

	got, err := client.Eval(context.Background(), script, keys).Text()

	require.NoError(t, err)
	assert.Equal(t, "ok", got)
}

func TestDedicatedIsNotShared(t *testing.T) {
	a := redistest.Dedicated(t)
	b := redistest.Dedicated(t)

	assert.NotEqual(t, a.Addr(), b.Addr())
	assert.NotEqual(t, redistest.Standalone(t).Addr(), a.Addr())
	assert.True(t, a.Started())
}

func TestPrefixIsUniqueAndKeySafe(t *testing.T) {
	a, b := redistest.Prefix(t), redistest.Prefix(t)

	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, "rt-"))
	assert.Len(t, a, len("rt-")+12)
}
