package refapi_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/policy"
	"github.com/ratelimitkit/ratelimit/examples/refapi"
)

// newPolicy returns the reference API's limiters over a memory store, with
// the policy file path ("" for none).
func newPolicy(t *testing.T, path string) *refapi.Policy {
	t.Helper()
	store, err := memstore.New()
	require.NoError(t, err)
	p, err := refapi.New(store, refapi.Config{Logger: slog.New(slog.DiscardHandler), PolicyFile: path})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// inForce returns the tiers l applies, by name, and its default tier.
func inForce(l *core.Limiter) (map[string][]core.Limit, string) {
	tiers := map[string][]core.Limit{}
	for _, name := range l.Tiers() {
		tiers[name], _ = l.Tier(name)
	}
	return tiers, l.DefaultTier()
}

// byName returns tiers by name.
func byName(tiers []core.Tier) map[string][]core.Limit {
	m := map[string][]core.Limit{}
	for _, t := range tiers {
		m[t.Name] = t.Limits
	}
	return m
}

// policy.yaml describes the four limiters exactly as the code builds them.
func TestPolicyFileDescribesTheCode(t *testing.T) {
	file, err := policy.Load("policy.yaml")
	require.NoError(t, err)
	limiters := newPolicy(t, "").Limiters()
	assert.ElementsMatch(t, file.Limiters(), []string{"api", "login", "hook", "export"})
	for name, l := range limiters {
		tiers, def, ok := file.Limiter(name)
		require.True(t, ok, name)
		want, wantDef := inForce(l)
		assert.Equal(t, want, byName(tiers), name)
		assert.Equal(t, wantDef, def, name)
	}
}

// With POLICY_FILE the limiters take the file's tiers, and take them again
// when it changes.
func TestPolicyFileIsAppliedAndWatched(t *testing.T) {
	data, err := os.ReadFile("policy.yaml")
	require.NoError(t, err)
	doc := strings.Replace(string(data), "{name: login, rate: 5,", "{name: login, rate: 7,", 1)
	require.NotEqual(t, string(data), doc)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))

	p := newPolicy(t, path)
	loginRate := func() int64 {
		limits, ok := p.Login.Tier("default")
		require.True(t, ok)
		return limits[0].Rate
	}
	assert.EqualValues(t, 7, loginRate(), "the file's, not the code's")

	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(strings.Replace(doc, "rate: 7,", "rate: 9,", 1)), 0o644))
	require.NoError(t, os.Rename(tmp, path))
	assert.Eventually(t, func() bool { return loginRate() == 9 }, 10*time.Second, 10*time.Millisecond, "the change applied")
}

// A service does not start on a policy file it cannot apply.
func TestPolicyFileThatFailsStopsTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte("version: 1\nlimiters:\n  api:\n    tiers: {free: [{rate: 1, period: 1s}]}\n"), 0o644))
	store, err := memstore.New()
	require.NoError(t, err)
	_, err = refapi.New(store, refapi.Config{Logger: slog.New(slog.DiscardHandler), PolicyFile: path})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `describes no limiter "export"`)
}
