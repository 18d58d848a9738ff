package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// twoPerHour is the limit of the limiters of the control tests: the third
// request of an hour is denied.
var twoPerHour = core.PerHour(2).WithName("hourly")

// A node is a limiter over Redis with a deny cache, as an application
// node runs it.
func node(t *testing.T, client redis.UniversalClient, prefix string) *core.Limiter {
	t.Helper()
	store, err := redisstore.New(client)
	require.NoError(t, err)
	l, err := core.NewLimiter(store, core.WithPrefix(prefix), core.WithLimits(twoPerHour), core.WithDenyCache(1024))
	require.NoError(t, err)
	return l
}

// allow makes one request of id through l, after reading the changes of
// the controls (as the node does within core.ControlSyncEvery).
func allow(t *testing.T, l *core.Limiter, id string) core.Result {
	t.Helper()
	require.NoError(t, l.SyncControls(context.Background()))
	res, err := l.Allow(context.Background(), id)
	require.NoError(t, err)
	require.False(t, res.Degraded)
	return res
}

// exhaust spends id's quota on l and checks that the next request is
// denied.
func exhaust(t *testing.T, l *core.Limiter, id string) {
	t.Helper()
	take(t, l, id, 2)
	res := allow(t, l, id)
	require.False(t, res.Allowed, "the third request of the hour is denied")
	require.Equal(t, core.Exhausted, res.Binding().Reason)
}

// standalone returns a client of a fresh standalone server and the
// connection flags naming it with prefix.
func standalone(t *testing.T) (redis.UniversalClient, func(prefix string) []string) {
	srv := redistest.Standalone(t)
	return srv.Client(t), func(prefix string) []string {
		return []string{"--redis", "redis://" + srv.Addr(), "--prefix", prefix}
	}
}

// An override set by the command applies on a limiter node after it
// reads the controls, is listed and read back, and ends with rm.
func TestOverrideSetIsAppliedByANode(t *testing.T) {
	client, conn := standalone(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := node(t, client, prefix)
	exhaust(t, l, "alice")

	code, stdout, stderr := cli(t, append([]string{"override", "set", "alice", "--limit", "hourly=10/1h,burst=20", "--for", "1h",
		"--reason", "ticket 4411", "--by", "ops"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "override set: hourly gcra 10/1h burst 20; until ")
	assert.Contains(t, stdout, `reason "ticket 4411"; by ops`)
	assert.Contains(t, stdout, "within 1s (core.ControlSyncEvery) plus one store round trip")
	assert.Contains(t, stdout, "drops its cached denials of this client")

	// GCRA keeps her usage as time: 2 of 2/h spent is an hour's worth,
	// which a burst of 20 at 10/h (two hours' worth) leaves room above.
	res := allow(t, l, "alice")
	assert.True(t, res.Allowed, "the raised limit admits alice, her cached denial dropped")
	assert.True(t, res.Overridden)
	assert.False(t, allow(t, l, "bob").Overridden, "no one else's limits change")

	code, stdout, _ = cli(t, append([]string{"override", "get", "alice"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "override: hourly gcra 10/1h burst 20; until ")
	code, stdout, _ = cli(t, append([]string{"override", "list"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `(?m)^alice\s+override\s+hourly gcra 10/1h burst 20\s+\S+Z\s+"ticket 4411"\s+ops$`, stdout)
	assert.Contains(t, stdout, "1 control under prefix")

	code, stdout, _ = cli(t, append([]string{"override", "rm", "alice"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "override removed")
	res = allow(t, l, "alice")
	assert.False(t, res.Overridden, "back to her tier's limits")
	assert.False(t, res.Allowed, "her tier's 2 an hour, already spent: the usage is kept")
	code, stdout, _ = cli(t, append([]string{"override", "get", "alice"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "no override")
}

// A block set by the command denies the client on a node with reason
// Blocked; unblock lets it in; blocks lists it meanwhile. Run on a
// Cluster too: the controls live in one slot, the client's keys in
// another.
func TestBlockAndUnblockAreAppliedByANode(t *testing.T) {
	for _, b := range []struct {
		name string
		conn func(t *testing.T) (redis.UniversalClient, []string)
	}{
		{"standalone", func(t *testing.T) (redis.UniversalClient, []string) {
			srv := redistest.Standalone(t)
			return srv.Client(t), []string{"--redis", "redis://" + srv.Addr()}
		}},
		{"cluster", func(t *testing.T) (redis.UniversalClient, []string) {
			c := redistest.Cluster(t)
			return c.Client(t), []string{"--cluster", strings.Join(c.Addrs(), ",")}
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			client, conn := b.conn(t)
			prefix := redistest.Prefix(t)
			cleanPrefix(t, client, prefix)
			conn = append(conn, "--prefix", prefix)
			l := node(t, client, prefix)
			require.True(t, allow(t, l, "mallory").Allowed)

			code, stdout, stderr := cli(t, append([]string{"block", "mallory", "--for", "15m", "--reason", "scraping"}, conn...)...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, "blocked: every request is denied")
			assert.Contains(t, stdout, "within 1s (core.ControlSyncEvery)")
			res := allow(t, l, "mallory")
			assert.False(t, res.Allowed)
			assert.Equal(t, core.Blocked, res.Binding().Reason)
			assert.InDelta(t, 15*time.Minute, res.Binding().RetryAfter, float64(time.Minute), "Retry-After until the block ends")
			assert.True(t, allow(t, l, "alice").Allowed, "no one else is blocked")

			code, stdout, _ = cli(t, append([]string{"blocks"}, conn...)...)
			require.Equal(t, exitOK, code)
			assert.Regexp(t, `(?m)^mallory\s+block\s+denied, reason blocked\s+\S+Z\s+"scraping"\s+`, stdout)

			code, stdout, _ = cli(t, append([]string{"unblock", "mallory"}, conn...)...)
			require.Equal(t, exitOK, code)
			assert.Contains(t, stdout, "unblocked; 0 keys of lockout state deleted")
			assert.True(t, allow(t, l, "mallory").Allowed, "unblocked on the node")
			code, stdout, _ = cli(t, append([]string{"blocks"}, conn...)...)
			require.Equal(t, exitOK, code)
			assert.Contains(t, stdout, "0 controls under prefix")
		})
	}
}

// An exempt client is admitted past its limit, without a store call;
// unexempt limits it again. controls lists every kind.
func TestExemptAndUnexemptAreAppliedByANode(t *testing.T) {
	client, conn := standalone(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := node(t, client, prefix)
	exhaust(t, l, "probe")

	code, stdout, stderr := cli(t, append([]string{"exempt", "probe", "--reason", "uptime probe"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `exempt: every request is admitted without a store call, until removed; reason "uptime probe"`)
	for range 5 {
		res := allow(t, l, "probe")
		require.True(t, res.Allowed)
		require.True(t, res.Exempt)
	}
	code, _, _ = cli(t, append([]string{"block", "mallory", "--for", "1h", "--reason", "abuse"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	code, stdout, _ = cli(t, append([]string{"controls"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `(?m)^probe\s+exempt\s+admitted, no store call\s+until removed\s+"uptime probe"`, stdout)
	assert.Regexp(t, `(?m)^mallory\s+block\s+`, stdout)
	assert.Contains(t, stdout, "2 controls under prefix")

	code, stdout, _ = cli(t, append([]string{"unexempt", "probe"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "exemption ended")
	res := allow(t, l, "probe")
	assert.False(t, res.Allowed, "limited again: the quota spent before is still spent")
	assert.False(t, res.Exempt)
}

// A node that denied a client answers later requests from its deny cache:
// deleting the client's keys by hand does not reach it (the issue's
// complaint), ratelimit reset does, once the node reads the controls.
func TestResetClearsANodesCachedDenial(t *testing.T) {
	client, conn := standalone(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := node(t, client, prefix)
	exhaust(t, l, "alice")

	// By hand: the keys go, the cached denial stays.
	for _, k := range redistest.ScanKeys(t, client, prefix+":{alice}:*") {
		require.NoError(t, client.Del(context.Background(), k).Err())
	}
	require.False(t, allow(t, l, "alice").Allowed, "the node answers from its deny cache")

	code, stdout, stderr := cli(t, append([]string{"reset", "alice"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "no keys to delete\n")
	assert.Contains(t, stdout, "touched the client's control record")
	assert.Contains(t, stdout, "within 1s (core.ControlSyncEvery) plus one store round trip")
	assert.True(t, allow(t, l, "alice").Allowed, "the node dropped its cached denial")

	// The usual way: reset deletes the keys and touches.
	exhaust(t, l, "alice")
	code, stdout, _ = cli(t, append([]string{"reset", "alice"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "1 keys deleted\n")
	assert.Contains(t, stdout, "touched the client's control record")
	assert.True(t, allow(t, l, "alice").Allowed)
}

// reset deletes a client's lockout state keys (<prefix>:{tag}:<limit>:x)
// with its other keys, and unblock deletes them alone; audit counts them
// as lockout state, not as strangers.
func TestResetAndUnblockDeleteLockoutState(t *testing.T) {
	client, conn := standalone(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := node(t, client, prefix)
	take(t, l, "alice", 1)
	ctx := context.Background()
	lockout := prefix + ":{alice}:hourly:x"
	require.NoError(t, client.HSet(ctx, lockout, "u", 1).Err())
	require.NoError(t, client.Expire(ctx, lockout, time.Hour).Err())

	code, stdout, _ := cli(t, append([]string{"audit"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Regexp(t, line("hourly lockout state", "1"), stdout)
	assert.NotContains(t, stdout, "not a limiter key")

	code, stdout, _ = cli(t, append([]string{"unblock", "alice"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "unblocked; 1 key of lockout state deleted")
	assert.Len(t, redistest.ScanKeys(t, client, prefix+":{alice}:*"), 1, "the limit's own state is kept")

	require.NoError(t, client.HSet(ctx, lockout, "u", 1).Err())
	code, stdout, _ = cli(t, append([]string{"reset", "alice"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "deleted "+lockout+"\n")
	assert.Contains(t, stdout, "2 keys deleted\n")
}

// audit counts the controls in force per prefix, by kind.
func TestAuditCountsControlsByKind(t *testing.T) {
	client, conn := standalone(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	take(t, node(t, client, prefix), "alice", 1)
	for _, args := range [][]string{
		{"override", "set", "alice", "--tier", "pro", "--reason", "trial"},
		{"override", "set", "bob", "--limit", "hourly=5/1h", "--reason", "trial"},
		{"block", "mallory", "--for", "1h", "--reason", "abuse"},
		{"exempt", "probe", "--reason", "probe"},
	} {
		code, _, stderr := cli(t, append(args, conn(prefix)...)...)
		require.Equal(t, exitOK, code, stderr)
	}
	code, stdout, _ := cli(t, append([]string{"audit"}, conn(prefix)...)...)
	require.Equal(t, exitOK, code)
	assert.Regexp(t, line(prefix, "4 records", "in force: 2 overrides, 1 block, 1 exemption"), stdout)
}
