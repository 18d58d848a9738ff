package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestResetDeletesOnlyThatIdentitysKeys(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	tests := []struct {
		name     string
		identity string
		args     []string
	}{
		{"plain identity", "alice", nil},
		{"identity with glob characters", "ali*", nil},
		{"hashed identity", "alice smith", nil},
		{"by tag", core.SafeIdentity("alice smith"), []string{"--tag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			cleanPrefix(t, client, prefix)
			tb := core.PerHour(10).WithName("tokens").WithAlgorithm(core.TokenBucket)
			l := newLimiter(t, client, prefix, hourly, daily, tb)
			identities := []string{"alice", "alicex", "ali*", "ali", "alice smith"}
			for _, id := range identities {
				take(t, l, id, 1)
			}
			target := tt.identity
			if tt.args != nil {
				target = "alice smith" // the tag's identity
			}
			conn := []string{"--redis", "redis://" + srv.Addr(), "--prefix", prefix}

			code, stdout, _ := cli(t, append(append([]string{"reset", tt.identity, "--dry-run"}, conn...), tt.args...)...)
			require.Equal(t, exitOK, code)
			assert.Contains(t, stdout, "would delete "+prefix+":{"+core.SafeIdentity(target)+"}:hourly:g\n")
			require.Len(t, redistest.ScanKeys(t, client, prefix+":*"), 3*len(identities), "a dry run deletes nothing")

			code, stdout, _ = cli(t, append(append([]string{"reset", tt.identity}, conn...), tt.args...)...)
			require.Equal(t, exitOK, code)
			assert.Contains(t, stdout, "3 keys deleted\n")
			for _, id := range identities {
				keys := redistest.ScanKeys(t, client, prefix+":{"+globEscape(core.SafeIdentity(id))+"}:*")
				if id == target {
					assert.Empty(t, keys, id)
				} else {
					assert.Len(t, keys, 3, id)
				}
			}

			code, stdout, _ = cli(t, append(append([]string{"reset", tt.identity}, conn...), tt.args...)...)
			assert.Equal(t, exitOK, code)
			assert.Contains(t, stdout, "no keys to delete\n")
		})
	}
}
