package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
				require.NoError(t, client.Set(ctx, prefix+":{odd}:weekly:f", "1", time.Hour).Err())
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
			assert.Regexp(t, line("<= 1d", "3"), stdout, "daily keys expire at the end of the UTC day")
			assert.Regexp(t, `(?m)^memory\s+about [0-9.]+ (B|KiB) \(mean [0-9.]+ B per key, MEMORY USAGE of \d+ keys\)$`, stdout)
			if tt.wantCode == exitFindings {
				assert.Contains(t, stderr, "ratelimit: audit found")
			} else {
				assert.Empty(t, stderr)
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
