package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestAuditStandalone(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		extra    func(prefix string) // writes keys the limiter would not
		wantCode int
		want     []string
	}{
		{
			name:     "only limiter keys: clean",
			extra:    func(string) {},
			wantCode: exitOK,
			want:     []string{"keys without TTL: 0\n", "keys whose Redis type does not match their algorithm tag: 0\n"},
		},
		{
			name: "a key without TTL: listed, exit 1",
			extra: func(prefix string) {
				require.NoError(t, client.Set(ctx, prefix+":{legacy}:old:g", "1", 0).Err())
			},
			wantCode: exitFindings,
			want:     []string{"keys without TTL: 1\n  PREFIX:{legacy}:old:g\n"},
		},
		{
			name: "a key of the wrong type: listed, exit 1",
			extra: func(prefix string) {
				require.NoError(t, client.Set(ctx, prefix+":{odd}:weekly:f", "1", 5*time.Minute).Err())
			},
			wantCode: exitFindings,
			want:     []string{"keys whose Redis type does not match their algorithm tag: 1\n  PREFIX:{odd}:weekly:f (string)\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			cleanPrefix(t, client, prefix)
			l := newLimiter(t, client, prefix, core.PerSecond(10).WithName("per-second"), core.PerDay(1000).WithName("daily").WithAlgorithm(core.FixedWindow))
			for i := range 3 {
				take(t, l, fmt.Sprintf("client-%d", i), 1)
			}
			require.NoError(t, client.Set(ctx, prefix+"x:{other}:a:g", "1", 0).Err(), "another prefix: not audited")
			tt.extra(prefix)

			code, stdout, stderr := cli(t, "audit", "--redis", "redis://"+srv.Addr(), "--prefix", prefix)

			assert.Equal(t, tt.wantCode, code)
			for _, w := range tt.want {
				assert.Contains(t, stdout, strings.ReplaceAll(w, "PREFIX", prefix))
			}
			assert.Regexp(t, line("per-second gcra", "3"), stdout)
			assert.Regexp(t, line("daily fixed_window", "3"), stdout)
			assert.Regexp(t, line("<= 1s", "3"), stdout, "per-second keys expire within 100 ms")
			assert.True(t, slices.ContainsFunc(dailyBuckets(time.Now()), func(b string) bool { return line(b, "3").MatchString(stdout) }),
				"daily keys expire at the end of the UTC day, in the %v bucket:\n%s", dailyBuckets(time.Now()), stdout)
			assert.Regexp(t, `(?m)^memory\s+about [0-9.]+ (B|KiB) \(mean [0-9.]+ B per key, MEMORY USAGE of \d+ keys\)$`, stdout)
			if tt.wantCode == exitFindings {
				assert.Contains(t, stderr, "ratelimit: audit found")
			} else {
				assert.Equal(t, serverLine(srv.Addr()), stderr, "only the server line")
			}
		})
	}
}

func TestAuditCluster(t *testing.T) {
	cluster := redistest.Cluster(t)
	client := cluster.Client(t)
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	l := newLimiter(t, client, prefix, core.PerMinute(10).WithName("per-minute"))
	const clients = 30 // spread over the three masters
	for i := range clients {
		take(t, l, fmt.Sprintf("client-%d", i), 1)
	}
	require.NoError(t, client.Set(ctx, prefix+":{legacy}:per-minute:g", "1", 0).Err())

	code, stdout, stderr := cli(t, "audit", "--cluster", strings.Join(cluster.Addrs(), ","), "--prefix", prefix, "--sample", "5")

	assert.Equal(t, exitFindings, code)
	masters := cluster.Addrs()
	slices.Sort(masters)
	assert.True(t, strings.HasPrefix(stderr, "redis cluster 3 masters: "+strings.Join(masters, ",")+"\n"), "server line first")
	assert.Contains(t, stderr, "ratelimit: audit found 1 keys without TTL")
	assert.Regexp(t, line("keys", fmt.Sprint(clients+1)), stdout)
	assert.Equal(t, 3, strings.Count(stdout, "\nnode "), "one line per master")
	assert.Regexp(t, line("per-minute gcra", fmt.Sprint(clients+1)), stdout)
	assert.Contains(t, stdout, "keys without TTL: 1\n  "+prefix+":{legacy}:per-minute:g\n")
	assert.Regexp(t, `MEMORY USAGE of (1[0-5]|[5-9]) keys`, stdout, "up to --sample keys per master")
}

func TestAuditListsAtMostListKeys(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	for i := range 5 {
		require.NoError(t, client.Set(context.Background(), fmt.Sprintf("%s:{c%d}:x:g", prefix, i), "1", 0).Err())
	}

	code, stdout, _ := cli(t, "audit", "--redis", "redis://"+srv.Addr(), "--prefix", prefix, "--list", "2", "--sample", "0")

	assert.Equal(t, exitFindings, code)
	assert.Contains(t, stdout, "keys without TTL: 5\n")
	assert.Contains(t, stdout, "  ... and 3 more (--list)\n")
	assert.Regexp(t, line("memory", "not sampled (--sample 0)"), stdout)
}

func TestAuditCoversTheSubPrefixes(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	root := redistest.Prefix(t)
	cleanPrefix(t, client, root)
	api := newLimiter(t, client, root+":api", core.PerSecond(10).WithName("burst"), core.PerDay(1000).WithName("daily").WithAlgorithm(core.FixedWindow))
	login := newLimiter(t, client, root+":login", core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog))
	for i := range 3 {
		take(t, api, fmt.Sprintf("203.0.113.%d", i), 1)
	}
	take(t, login, core.Identity("form:abc", "203.0.113.1"), 1)
	conn := []string{"--redis", "redis://" + srv.Addr()}

	t.Run("the root prefix finds every limiter", func(t *testing.T) {
		code, stdout, stderr := cli(t, append([]string{"audit", "--prefix", root}, conn...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, fmt.Sprintf("audit of prefix %q and its sub-prefixes (%s:*)", root, root))
		assert.Regexp(t, line("keys", "7"), stdout)
		assert.Regexp(t, line(root+":api", "6"), stdout)
		assert.Regexp(t, line("burst gcra", "3"), stdout)
		assert.Regexp(t, line("daily fixed_window", "3"), stdout)
		assert.Regexp(t, line(root+":login", "1"), stdout)
		assert.Regexp(t, line("login sliding_log", "1"), stdout)
		assert.NotContains(t, stdout, "not a limiter key")
	})
	t.Run("--prefix narrows to one limiter", func(t *testing.T) {
		code, stdout, stderr := cli(t, append([]string{"audit", "--prefix", root + ":login"}, conn...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Regexp(t, line("keys", "1"), stdout)
		assert.Regexp(t, line(root+":login", "1"), stdout)
		assert.NotContains(t, stdout, root+":api")
	})
}

func TestAuditWithDefaultFlags(t *testing.T) {
	srv := redistest.Dedicated(t) // an empty server of its own, for the default prefix "rl"
	client := srv.Client(t)
	vars := map[string]string{"REDIS_URL": "redis://" + srv.Addr()}

	t.Run("no keys: a warning with hints, exit 3", func(t *testing.T) {
		code, stdout, stderr := cliEnv(t, vars, "audit")
		assert.Equal(t, exitNoKeys, code)
		assert.Regexp(t, line("keys", "0"), stdout)
		assert.True(t, strings.HasPrefix(stderr, "redis standalone "+srv.Addr()+" db 0 (from $REDIS_URL)\n"), "server line first")
		assert.Contains(t, stderr, `ratelimit: WARNING: no keys under prefix "rl" or its sub-prefixes (rl:*) on standalone `+srv.Addr()+", from $REDIS_URL\n")
		assert.Contains(t, stderr, "  wrong server? point --redis URL")
		assert.Contains(t, stderr, "  db 0 of this server holds no keys at all\n")
		assert.Contains(t, stderr, "  idle? keys expire once their client is back at full quota")
	})
	t.Run("keys in another db and under another prefix: named", func(t *testing.T) {
		other := redis.NewClient(&redis.Options{Addr: srv.Addr(), DB: 2})
		t.Cleanup(func() { _ = other.Close() })
		require.NoError(t, other.Set(context.Background(), "rl:{alice}:burst:g", "1", time.Hour).Err())
		require.NoError(t, client.Set(context.Background(), "ratelimit:{alice}:burst:g", "1", time.Hour).Err())
		t.Cleanup(func() { client.FlushAll(context.Background()) })

		code, _, stderr := cliEnv(t, vars, "audit")
		assert.Equal(t, exitNoKeys, code)
		assert.Contains(t, stderr, "  wrong prefix? db 0 holds 1 key, none under rl:; give --prefix the limiters' core.WithPrefix\n")
		assert.Contains(t, stderr, "  different db? db 2 holds 1 key: add /2 to the URL (redis://host:port/2)\n")
	})
	t.Run("the reference API's prefixes are found", func(t *testing.T) {
		api := newLimiter(t, client, "rl:api", core.PerSecond(10).WithName("burst"))
		login := newLimiter(t, client, "rl:login", core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog))
		hook := newLimiter(t, client, "rl:hook", core.Limit{Rate: 100, Period: 10 * time.Second, Name: "webhook", Algorithm: core.SlidingWindow})
		take(t, api, "203.0.113.7", 1)
		take(t, api, "203.0.113.8", 1)
		take(t, login, core.Identity("form:abc", "203.0.113.7"), 1)
		take(t, hook, "path:github", 1)
		t.Cleanup(func() { client.FlushAll(context.Background()) })

		code, stdout, stderr := cliEnv(t, vars, "audit")
		require.Equal(t, exitOK, code, stderr)
		assert.Regexp(t, line("keys", "4"), stdout)
		assert.Regexp(t, line("rl:api", "2"), stdout)
		assert.Regexp(t, line("rl:login", "1"), stdout)
		assert.Regexp(t, line("rl:hook", "1"), stdout)
		assert.Regexp(t, line("webhook sliding_window", "1"), stdout)
		assert.NotContains(t, stderr, "WARNING")
	})
}

func TestAuditTopListsTheBusiestClients(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	cleanPrefix(t, client, prefix)
	// Two limiters on one prefix: a client of both has two keys.
	hourlyOnly := newLimiter(t, client, prefix, hourly)
	dailyOnly := newLimiter(t, client, prefix, daily)
	take(t, hourlyOnly, "both", 1)
	take(t, dailyOnly, "both", 1)
	take(t, hourlyOnly, "heavy", 5) // its GCRA key lives 5 × 36 s
	take(t, hourlyOnly, "light", 1) // 36 s
	take(t, hourlyOnly, "user with spaces", 2)
	conn := []string{"--redis", "redis://" + srv.Addr(), "--prefix", prefix}

	code, stdout, stderr := cli(t, append([]string{"audit", "--top", "3"}, conn...)...)

	require.Equal(t, exitOK, code, stderr)
	head := func(tag string) string { return regexp.QuoteMeta(prefix + ":{" + tag + "}") }
	assert.Regexp(t, `(?s)top 3 clients by keys, then longest TTL \(of 4\):\n`+
		`\s+KEYS\s+LONGEST TTL\s+CLIENT\s+LIMITS\n`+
		`\s+2\s+23h59m\S*\s+`+head("both")+`\s+daily sliding_log, hourly gcra\n`+
		`\s+1\s+(2m5\d|3m)\S*\s+`+head("heavy")+`\s+hourly gcra\n`+
		`\s+1\s+1m\S*\s+`+head(core.SafeIdentity("user with spaces"))+`\s+hourly gcra\n`+
		`  \(CLIENT is PREFIX:\{TAG\}; inspect the first with: ratelimit inspect --prefix '`+prefix+`' --tag 'both'\)\n`, stdout)
	assert.NotContains(t, stdout, "{light}", "fourth: beyond --top 3")

	code, stdout, _ = cli(t, append([]string{"audit"}, conn...)...)
	require.Equal(t, exitOK, code)
	assert.NotContains(t, stdout, "top ", "no --top, no list")
}

// TestAuditWarnsWhenTheClusterRequiresFullCoverage: with Redis's default
// cluster-require-full-coverage yes, one dead master stops every client,
// so audit warns, naming the masters; with no it says nothing of it. The
// warning leaves the exit status alone (here: no keys).
func TestAuditWarnsWhenTheClusterRequiresFullCoverage(t *testing.T) {
	tests := []struct {
		name  string
		flags []string
		warns bool
	}{
		{"Redis's default, yes", nil, true},
		{"no", []string{"--cluster-require-full-coverage", "no"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := redistest.DedicatedCluster(t, tt.flags...)

			code, _, stderr := cli(t, "audit", "--cluster", strings.Join(cluster.Addrs(), ","), "--prefix", redistest.Prefix(t))

			assert.Equal(t, exitNoKeys, code)
			if !tt.warns {
				assert.NotContains(t, stderr, "cluster-require-full-coverage")
				return
			}
			assert.Contains(t, stderr, "ratelimit: warning: cluster-require-full-coverage is yes on ")
			for _, m := range cluster.Addrs() {
				assert.Contains(t, stderr, m)
			}
		})
	}
}

// dailyBuckets returns the TTL buckets a key of a daily fixed window
// written at about now falls in: it expires at the end of the UTC day, so
// in the last hour of the day its TTL is under an hour. Within 5 s of that
// boundary (the Redis clock and the test's may read a little apart) either
// bucket is right.
func dailyBuckets(now time.Time) []string {
	left := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now)
	switch {
	case left > time.Hour+5*time.Second:
		return []string{"<= 1d"}
	case left < time.Hour-5*time.Second:
		return []string{"<= 1h"}
	}
	return []string{"<= 1d", "<= 1h"}
}
