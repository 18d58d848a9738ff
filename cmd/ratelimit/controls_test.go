package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// setControls stores a record for each id in the controls of prefix, as a
// limiter's Block or SetOverride would.
func setControls(t *testing.T, client redis.UniversalClient, prefix string, ids ...string) {
	t.Helper()
	store, err := redisstore.New(client, redisstore.WithLogger(nil))
	require.NoError(t, err)
	for _, id := range ids {
		_, err := store.SetControl(context.Background(), prefix, id, []byte(`{"block":{"until":"2099-01-01T00:00:00Z"}}`), time.Time{})
		require.NoError(t, err)
	}
}

// The control keys of a prefix (P:{~ctl}:*) are no client's: audit counts
// their records per prefix, checks their TTLs and types, and neither calls
// them malformed nor lists them among the clients.
func TestAuditCountsControlsApart(t *testing.T) {
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
			l := newLimiter(t, client, prefix, hourly)
			take(t, l, "alice", 1)
			take(t, l, "bob", 1)
			setControls(t, client, prefix, "alice", "carol")
			setControls(t, client, prefix+":login", "dave")

			code, stdout, stderr := cli(t, append([]string{"audit", "--prefix", prefix, "--top", "10"}, conn...)...)

			require.Equal(t, exitOK, code, stderr)
			assert.Regexp(t, line("keys", "12"), stdout, "2 clients' keys and 5 control keys of each prefix")
			assert.Regexp(t, line(prefix, "2"), stdout, "the prefix's client keys")
			assert.Regexp(t, line("controls (overrides, blocks, exemptions) by prefix, PREFIX:{~ctl}:*"), stdout)
			assert.Regexp(t, line(prefix, "2 records", "in force: 0 overrides, 2 blocks, 0 exemptions"), stdout)
			assert.Regexp(t, line(prefix+":login", "1 record", "in force: 0 overrides, 1 block, 0 exemptions"), stdout)
			assert.NotContains(t, stdout, "not a limiter key")
			assert.NotContains(t, stdout, prefix+":{~ctl}", "no control key listed as a client")
			assert.Contains(t, stdout, "top 2 clients by keys, then longest TTL (of 2)")
			assert.Contains(t, stdout, "keys without TTL: 0\n")
			assert.Contains(t, stdout, "keys whose Redis type does not match their algorithm tag: 0\n")
		})
	}
}

// A control key of the wrong type is a finding, as a client key's is.
func TestAuditFindsAControlKeyOfTheWrongType(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	require.NoError(t, client.Set(context.Background(), prefix+":{~ctl}:r", "x", time.Hour).Err())

	code, stdout, _ := cli(t, "audit", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)

	assert.Equal(t, exitFindings, code)
	assert.Contains(t, stdout, "keys whose Redis type does not match their algorithm tag: 1\n  "+prefix+":{~ctl}:r (string)\n")
	assert.Regexp(t, `(?m)^\s*`+regexp.QuoteMeta(prefix)+`\s+0 records\s+in force: `, stdout)
}

// inspect and reset work on clients: the controls' tag is refused, and a
// reset leaves the controls alone.
func TestInspectAndResetLeaveTheControlsAlone(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	take(t, newLimiter(t, client, prefix, hourly), "alice", 1)
	setControls(t, client, prefix, "alice")
	conn := []string{"--redis", "redis://" + srv.Addr(), "--prefix", prefix}

	for _, cmd := range []string{"inspect", "reset"} {
		code, _, stderr := cli(t, append([]string{cmd, "--tag", "~ctl"}, conn...)...)
		assert.Equal(t, exitError, code, cmd)
		assert.Contains(t, stderr, `--tag "~ctl": that is the tag of the limiters' controls`, cmd)
	}
	code, stdout, stderr := cli(t, append([]string{"reset", "alice"}, conn...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "1 keys deleted\n")
	assert.Len(t, redistest.ScanKeys(t, client, prefix+":{~ctl}:*"), 5, "the controls are kept")
	assert.NotContains(t, stdout, "~ctl")
}
