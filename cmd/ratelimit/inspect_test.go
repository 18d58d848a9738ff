package main

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// Slow limits: nothing refills or rolls over during a test.
var (
	hourly = core.PerHour(100).WithName("hourly")
	daily  = core.PerDay(1000).WithName("daily").WithAlgorithm(core.SlidingLog)
	specs  = []string{"--limit", "hourly=100/1h", "--limit", "daily=1000/1d,alg=sliding_log"}
)

func TestInspectShowsRemainingAfterTakes(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := newLimiter(t, client, prefix, hourly, daily)
	take(t, l, "203.0.113.7", 3)
	take(t, l, "198.51.100.1", 1)

	args := append([]string{"inspect", "203.0.113.7", "--redis", "redis://" + srv.Addr(), "--prefix", prefix}, specs...)
	code, stdout, stderr := cli(t, args...)

	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `identity "203.0.113.7": keys `+prefix+":{203.0.113.7}:*\n")
	assert.Regexp(t, `(?m)^hourly\s+gcra\s+100/1h\s+97/100\s+\S+\s+\S+\s+`+prefix+`:\{203\.0\.113\.7\}:hourly:g$`, stdout)
	assert.Regexp(t, `(?m)^daily\s+sliding_log\s+1000/1d\s+997/1000\s+\S+\s+\S+\s+`+prefix+`:\{203\.0\.113\.7\}:daily:l$`, stdout)

	t.Run("a peek charges nothing", func(t *testing.T) {
		code, stdout, _ := cli(t, args...)
		require.Equal(t, exitOK, code)
		assert.Regexp(t, `(?m)^hourly\s+gcra\s+100/1h\s+97/100\s`, stdout)
	})
	t.Run("an unseen client is at full quota, without keys", func(t *testing.T) {
		code, stdout, _ := cli(t, "inspect", "192.0.2.99", "--redis", "redis://"+srv.Addr(), "--prefix", prefix, "--limit", "hourly=100/1h")
		require.Equal(t, exitOK, code)
		assert.Regexp(t, `(?m)^hourly\s+gcra\s+100/1h\s+100/100\s+0s\s+\(no key\)\s`, stdout)
	})
}

func TestInspectWithoutLimitsDumpsRawState(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	tb := core.PerHour(100).WithName("tokens").WithAlgorithm(core.TokenBucket)
	fw := core.PerHour(100).WithName("window").WithAlgorithm(core.FixedWindow)
	l := newLimiter(t, client, prefix, hourly, daily, tb, fw)
	take(t, l, "alice", 2)

	code, stdout, stderr := cli(t, "inspect", "alice", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)

	require.Equal(t, exitOK, code, stderr)
	key := prefix + ":{alice}:"
	assert.Regexp(t, `(?m)^`+key+`daily:l\s+zset\s+\S+\s+2 entries, oldest \S+ ago, newest \S+ ago$`, stdout)
	assert.Regexp(t, `(?m)^`+key+`hourly:g\s+string\s+\S+\s+tat=\d+(\.\d+)? µs: full again in 1m(0\d|1[0-2])(\.\d+)?s$`, stdout,
		"2 × 36 s, less the time since")
	assert.Regexp(t, `(?m)^`+key+`tokens:t\s+hash\s+\S+\s+tk=98(\.\d+)? ts=\d+: 98\.\d\d tokens \S+ ago$`, stdout)
	assert.Regexp(t, `(?m)^`+key+`window:f\s+hash\s+\S+\s+n=2 w=\d+$`, stdout)

	code, stdout, _ = cli(t, "inspect", "bob", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "no keys: every limit of this client is at full quota")
}

func TestInspectFindsTheKeysOfAnyIdentity(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := newLimiter(t, client, prefix, hourly)
	scoped := core.Identity("/login", "203.0.113.7")
	long := strings.Repeat("k", 100)
	for _, id := range []string{"user with spaces", long, scoped, "a*b"} {
		take(t, l, id, 1)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"hashed identity", []string{"user with spaces"}, "(hashed: it is long or has bytes outside the key-safe set)"},
		{"long identity", []string{long}, "(hashed: "},
		{"route-scoped identity", []string{"203.0.113.7", "--route", "/login"}, `scoped to its route (limiter identity "` + scoped + `")`},
		{"glob characters are literal", []string{"a*b"}, `identity "a*b": keys`},
		{"tag from an audit listing", []string{core.SafeIdentity("user with spaces"), "--tag"}, "tag " + core.SafeIdentity("user with spaces")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"inspect", "--redis", "redis://" + srv.Addr(), "--prefix", prefix, "--limit", "hourly=100/1h"}, tt.args...)
			code, stdout, stderr := cli(t, args...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, tt.want)
			assert.Regexp(t, `\s99/100\s`, stdout)
		})
	}
}

func TestInspectAndResetOnCluster(t *testing.T) {
	cluster := redistest.Cluster(t)
	client := cluster.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := newLimiter(t, client, prefix, hourly, daily)
	take(t, l, "carol", 5)
	take(t, l, "dave", 1)
	conn := []string{"--cluster", strings.Join(cluster.Addrs(), ","), "--prefix", prefix}

	code, stdout, _ := cli(t, append(append([]string{"inspect", "carol"}, conn...), specs...)...)
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `(?m)^hourly\s+gcra\s+100/1h\s+95/100\s`, stdout)
	assert.Regexp(t, `(?m)^daily\s+sliding_log\s+1000/1d\s+995/1000\s`, stdout)

	code, stdout, _ = cli(t, append([]string{"inspect", "carol"}, conn...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, prefix+":{carol}:hourly:g")

	code, stdout, _ = cli(t, append([]string{"reset", "carol"}, conn...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "2 keys deleted")
	assert.Empty(t, redistest.ScanKeys(t, client, prefix+":{carol}:*"))
	assert.Len(t, redistest.ScanKeys(t, client, prefix+":{dave}:*"), 2, "other clients keep their state")
}

func TestInspectThroughSentinel(t *testing.T) {
	group := redistest.Sentinel(t, 1)
	master := redis.NewClient(&redis.Options{Addr: group.MasterAddr()})
	t.Cleanup(func() { _ = master.Close() })
	prefix := redistest.Prefix(t)
	l := newLimiter(t, master, prefix, hourly)
	take(t, l, "erin", 4)

	code, stdout, stderr := cli(t, "inspect", "erin", "--sentinel", strings.Join(group.SentinelAddrs(), ","),
		"--sentinel-master", redistest.SentinelMasterName, "--prefix", prefix, "--limit", "hourly=100/1h")

	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^hourly\s+gcra\s+100/1h\s+96/100\s`, stdout)
}
