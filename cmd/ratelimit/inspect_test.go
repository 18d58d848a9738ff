package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
	"github.com/ratelimitkit/ratelimit/keyfunc"
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
	assert.Regexp(t, `(?m)^`+key+`daily:l\s+zset\s+\S+\s+2 units in [12] runs, oldest \S+ ago, newest \S+ ago$`, stdout)
	assert.Regexp(t, `(?m)^`+key+`hourly:g\s+string\s+\S+\s+tat=\d+(\.\d+)? µs: full again in 1m(0\d|1[0-2])(\.\d+)?s$`, stdout,
		"2 × 36 s, less the time since")
	assert.Regexp(t, `(?m)^`+key+`tokens:t\s+hash\s+\S+\s+tk=98(\.\d+)? ts=\d+: 98\.\d\d tokens \S+ ago$`, stdout)
	assert.Regexp(t, `(?m)^`+key+`window:f\s+hash\s+\S+\s+d=3600000000 n=2 w=\d+$`, stdout)

	code, stdout, _ = cli(t, "inspect", "bob", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, `no keys under prefix "`+prefix+`": every limit of this client is at full quota`)
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

	sentinels := strings.Join(group.SentinelAddrs(), ",")
	code, stdout, stderr := cli(t, "inspect", "erin", "--sentinel", sentinels,
		"--sentinel-master", redistest.SentinelMasterName, "--prefix", prefix, "--limit", "hourly=100/1h")

	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "redis sentinel master "+redistest.SentinelMasterName+" via "+sentinels+" db 0\n", stderr)
	assert.Regexp(t, `(?m)^hourly\s+gcra\s+100/1h\s+96/100\s`, stdout)
}

// loginRequest is a login form post of account from 203.0.113.7.
func loginRequest(account string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"account": {account}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = "203.0.113.7:5000"
	return r
}

func TestInspectAndResetByParts(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	root := redistest.Prefix(t)
	cleanPrefix(t, client, root)
	// The reference API's login guard: per account and address.
	keyOf := keyfunc.Composite(keyfunc.Must(keyfunc.FormValue("account")), keyfunc.Must(keyfunc.PeerIP()))
	alice, err := keyOf(loginRequest("Alice"))
	require.NoError(t, err)
	bob, err := keyOf(loginRequest("bob"))
	require.NoError(t, err)
	loginLimit := core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog)
	login := newLimiter(t, client, root+":login", loginLimit)
	take(t, login, alice, 3)
	take(t, login, bob, 1)
	// The same key function behind a route-scoped limiter (WithRouteScope
	// takes core.Identity(route, identity), core/middleware.go).
	scoped := newLimiter(t, client, root+":scoped", hourly)
	take(t, scoped, core.Identity("/login", alice), 2)
	conn := []string{"--redis", "redis://" + srv.Addr()}
	parts := []string{"--form-part", "account=Alice", "--part", "203.0.113.7"}
	aliceKey := root + ":login:{" + core.SafeIdentity(alice) + "}:login:l"

	t.Run("tag prints the limiter's tag", func(t *testing.T) {
		code, stdout, stderr := cli(t, append([]string{"tag"}, parts...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, core.SafeIdentity(alice)+"\n", stdout)
		assert.Contains(t, stderr, fmt.Sprintf("identity %q = core.Identity(", alice))

		code, stdout, _ = cli(t, append([]string{"tag", "--pattern", "--prefix", root + ":login"}, parts...)...)
		require.Equal(t, exitOK, code)
		pattern := strings.TrimSuffix(stdout, "\n")
		assert.Equal(t, []string{aliceKey}, redistest.ScanKeys(t, client, pattern), "the pattern finds the keys with SCAN")
	})
	t.Run("inspect with limits", func(t *testing.T) {
		args := append([]string{"inspect", "--prefix", root + ":login", "--limit", "login=5/1m,alg=sliding_log"}, parts...)
		code, stdout, stderr := cli(t, append(args, conn...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Regexp(t, `(?m)^login\s+sliding_log\s+5/1m\s+2/5\s+\S+\s+\S+\s+`+regexp.QuoteMeta(aliceKey)+`$`, stdout)
	})
	t.Run("inspect a route-scoped limiter", func(t *testing.T) {
		args := append([]string{"inspect", "--prefix", root + ":scoped", "--route", "/login", "--limit", "hourly=100/1h"}, parts...)
		code, stdout, stderr := cli(t, append(args, conn...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "scoped to its route")
		assert.Regexp(t, `(?m)^hourly\s+gcra\s+100/1h\s+98/100\s`, stdout)
	})
	t.Run("the root prefix names the limiters that hold keys", func(t *testing.T) {
		code, stdout, stderr := cli(t, append(append([]string{"inspect", "--prefix", root}, parts...), conn...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, fmt.Sprintf("no keys under prefix %q", root))
		assert.Contains(t, stdout, "keys of this client under other prefixes, not shown: "+root+":login (1 key); run again with --prefix "+root+":login for them\n")
		assert.NotContains(t, stdout, root+":scoped", "another identity there: the route is part of it")
	})
	t.Run("reset deletes that client's keys only", func(t *testing.T) {
		code, stdout, stderr := cli(t, append(append([]string{"reset", "--prefix", root + ":login"}, parts...), conn...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "deleted "+aliceKey+"\n1 keys deleted\n")
		assert.Empty(t, redistest.ScanKeys(t, client, globEscape(aliceKey)))
		assert.Len(t, redistest.ScanKeys(t, client, root+":login:{[^~]*"), 1, "bob's key stays (the controls' keys aside: reset touched alice's record)")
		assert.Len(t, redistest.ScanKeys(t, client, root+":scoped:*"), 1, "the scoped limiter's key stays")
	})
}

func TestFormPartIsKeyfuncFormValue(t *testing.T) {
	fn := keyfunc.Must(keyfunc.FormValue("account"))
	for _, account := range []string{"alice", " Alice@Example.com ", "ａｌｉｃｅ", "a=b&c"} {
		t.Run(account, func(t *testing.T) {
			r := loginRequest(account)
			want, err := fn(r)
			require.NoError(t, err)
			got, err := formPart("account=" + account)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func TestLogUnitsCountsRuns(t *testing.T) {
	tests := []struct {
		name           string
		n              int64
		oldest, newest string
		want           int64
	}{
		{"one run", 1, "r300:300", "r300:300", 300},
		{"runs after some expired", 3, "r12:2", "r40:5", 30},
		{"members before runs count one each", 4, "1700000000:0", "1700000001:3", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, logUnits(tt.n, redis.Z{Member: tt.oldest}, redis.Z{Member: tt.newest}))
		})
	}
}

func TestInspectShowsLeasesInFlight(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := newLimiter(t, client, prefix, hourly, core.Concurrent(5))
	take(t, l, "alice", 2) // two requests in flight: never released here

	code, stdout, stderr := cli(t, "inspect", "alice", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)
	require.Equal(t, exitOK, code, stderr)
	key := prefix + ":{alice}:"
	assert.Regexp(t, `(?m)^`+key+`5-in-flight:i\s+zset\s+\S+\s+2 leases in flight, oldest expires in \S+, newest in \S+$`, stdout)

	code, stdout, stderr = cli(t, "inspect", "alice", "--redis", "redis://"+srv.Addr(), "--prefix", prefix,
		"--limit", "hourly=100/1h", "--limit", "5/30s,alg=concurrency")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^5-in-flight\s+concurrency\s+5 in flight, lease 30s\s+3/5\s+\S+\s+\S+\s+`+prefix+`:\{alice\}:5-in-flight:i$`, stdout)

	// A release that ran before its take (a take still in flight when its
	// caller gave up) leaves a tombstone: it is no lease in flight.
	store, err := redisstore.New(client)
	require.NoError(t, err)
	require.NoError(t, store.Release(context.Background(), key+"5-in-flight:i", core.Concurrent(5), "not-taken-yet"))
	code, stdout, stderr = cli(t, "inspect", "alice", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?m)^`+key+`5-in-flight:i\s+zset\s+\S+\s+2 leases in flight, oldest expires in \S+, newest in \S+ \(1 released before their take ran\)$`, stdout)
}
