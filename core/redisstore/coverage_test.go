package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// TestCheckCoverage reads cluster-require-full-coverage on real clusters
// started with Redis's default (yes), with no, and with CONFIG renamed
// away (as managed services do): each master is reported required,
// silent, or unchecked.
func TestCheckCoverage(t *testing.T) {
	tests := []struct {
		name          string
		flags         []string
		required      bool // every master in Coverage.Required
		unchecked     bool // every master in Coverage.Unchecked
		warningSays   string
		warningAbsent bool
	}{
		{name: "Redis's default, yes", required: true, warningSays: "one dead master stops every client"},
		{name: "no", flags: []string{"--cluster-require-full-coverage", "no"}, warningAbsent: true},
		{name: "CONFIG renamed", flags: []string{"--rename-command", "CONFIG", ""}, unchecked: true,
			warningSays: "could not be checked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster := redistest.DedicatedCluster(t, tt.flags...)
			client := redisstore.NewClusterClient(cluster.Options())
			t.Cleanup(func() { _ = client.Close() })

			cov, err := redisstore.CheckCoverage(context.Background(), client)

			require.NoError(t, err)
			masters := cluster.Addrs()
			if tt.required {
				assert.ElementsMatch(t, masters, cov.Required)
			} else {
				assert.Empty(t, cov.Required)
			}
			if tt.unchecked {
				require.Len(t, cov.Unchecked, len(masters))
				for _, m := range masters {
					assert.True(t, slices.ContainsFunc(cov.Unchecked, func(u string) bool { return strings.HasPrefix(u, m+" (") }),
						"%s and why, in %q", m, cov.Unchecked)
				}
			} else {
				assert.Empty(t, cov.Unchecked)
			}
			if tt.warningAbsent {
				assert.Empty(t, cov.Warning())
			} else {
				assert.Contains(t, cov.Warning(), tt.warningSays)
			}
		})
	}
}

// A cluster the client cannot reach is an error, not a clean report.
func TestCheckCoverageUnreachable(t *testing.T) {
	client := redisstore.NewClusterClient(&redis.ClusterOptions{Addrs: []string{closedPort(t)}})
	t.Cleanup(func() { _ = client.Close() })
	_, err := redisstore.CheckCoverage(context.Background(), client)
	require.Error(t, err)
}
