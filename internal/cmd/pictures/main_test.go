package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// committed is where the pictures live, from this package's directory.
const committed = "../../../docs/pictures"

// TestPicturesUpToDate regenerates every picture and compares it byte for
// byte with the committed one, so a change to an algorithm, the store or
// the drawing that changes a picture fails until `make pictures` is run.
func TestPicturesUpToDate(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, write(dir))
	for _, alg := range algorithms {
		name := styles[alg].file
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(committed, name))
			require.NoError(t, err, "docs/pictures/%s is missing: run make pictures", name)
			got, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(t, err)
			assert.True(t, string(want) == string(got), "docs/pictures/%s is stale: run make pictures", name)
		})
	}
	entries, err := os.ReadDir(committed)
	require.NoError(t, err)
	assert.Len(t, entries, len(algorithms), "docs/pictures holds a file the program does not write")
}

// TestPicturesDeterministic writes the pictures twice and expects the same
// bytes: no map order, wall clock or randomness leaks into them.
func TestPicturesDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	require.NoError(t, write(a))
	require.NoError(t, write(b))
	for _, alg := range algorithms {
		name := styles[alg].file
		x, err := os.ReadFile(filepath.Join(a, name))
		require.NoError(t, err)
		y, err := os.ReadFile(filepath.Join(b, name))
		require.NoError(t, err)
		assert.True(t, string(x) == string(y), "%s differs between two runs", name)
	}
}

// TestCaptionsHold checks, on the runs the pictures draw, what each
// caption tells the reader to look at.
func TestCaptionsHold(t *testing.T) {
	runs := map[core.Algorithm]run{}
	for _, alg := range algorithms {
		r, err := simulate(alg)
		require.NoError(t, err)
		runs[alg] = r
	}

	t.Run("GCRA: one admission per emission interval after the burst", func(t *testing.T) {
		for from := steadyFrom; from < steadyTo; from += bucket {
			assert.Equal(t, 1, countIn(runs[core.GCRA].admitted, from-1, from+bucket-1), "bucket at %v", from)
		}
		assert.LessOrEqual(t, maxMoving(runs[core.GCRA].admitted), 2*limitRate) // Burst + Rate
	})
	t.Run("token bucket: the same admissions as GCRA", func(t *testing.T) {
		assert.Equal(t, runs[core.GCRA].admitted, runs[core.TokenBucket].admitted)
	})
	t.Run("fixed window: twice the limit across the boundary", func(t *testing.T) {
		fw := runs[core.FixedWindow].admitted
		assert.Equal(t, 2*limitRate, maxMoving(fw))
		assert.Equal(t, limitRate, countIn(fw, 0, time.Second-1), "window [0 s, 1 s)")
		assert.Equal(t, 0, countIn(fw, time.Second+400*time.Millisecond, 2*time.Second-1))
	})
	t.Run("sliding counter: above the limit while the burst is in the moving second", func(t *testing.T) {
		most := maxMoving(runs[core.SlidingWindow].admitted)
		assert.Greater(t, most, limitRate)
		assert.Less(t, most, 2*limitRate) // its documented worst case
	})
	t.Run("sliding log: never above the limit in any moving second", func(t *testing.T) {
		log := runs[core.SlidingLog].admitted
		assert.Equal(t, limitRate, maxMoving(log))
		assert.Equal(t, 0, countIn(log, time.Second, burstAt+limitPeriod-1), "nothing while the burst is in the window")
	})
}
