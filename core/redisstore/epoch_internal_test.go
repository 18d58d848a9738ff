package redisstore

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// luaEpoch matches the epoch as the scripts write it: "EPOCH = 1704067200",
// or the seconds of a TIME reply minus it ("t[1] - 1704067200",
// "tonumber(t[1]) - 1704067200").
var luaEpoch = regexp.MustCompile(`(?:EPOCH\s*=\s*|\[1\]\)?\s*-\s*)(\d+)`)

// The scripts count time from their own copy of the epoch (Lua cannot
// import Go's): every copy, in the embedded scripts and in the minimal
// programs the instruction counts are measured on, is the epoch Go sends
// and reads (keylayout.EpochUnix), or a test clock and TIME disagree.
func TestLuaEpochIsTheGoEpoch(t *testing.T) {
	sources := map[string]string{}
	require.NoError(t, fs.WalkDir(scriptFS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := scriptFS.ReadFile(path)
		sources[path] = string(b)
		return err
	}))
	minimal, err := filepath.Glob("testdata/minimal/*.lua")
	require.NoError(t, err)
	for _, path := range minimal {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		sources[path] = string(b)
	}
	found := 0
	for path, src := range sources {
		for _, m := range luaEpoch.FindAllStringSubmatch(src, -1) {
			found++
			got, err := strconv.ParseInt(m[1], 10, 64)
			require.NoError(t, err)
			assert.Equal(t, int64(keylayout.EpochUnix), got, "%s: %q", path, m[0])
		}
	}
	assert.GreaterOrEqual(t, found, 1+len(minimal), "the scripts state the epoch at least once, each minimal program once")
}
