package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCombos(t *testing.T) {
	got, err := parseCombos("16x10000, 64x1")
	require.NoError(t, err)
	assert.Equal(t, []combo{{16, 10_000}, {64, 1}}, got)
	for _, bad := range []string{"16", "0x10", "ax1", "16x0"} {
		_, err := parseCombos(bad)
		assert.Error(t, err, bad)
	}
}

func TestParseOnly(t *testing.T) {
	only, err := parseOnly("gcra, accuracy")
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"gcra": true, "accuracy": true}, only)
	_, err = parseOnly("gcr")
	assert.ErrorContains(t, err, `unknown family "gcr"`)
}

func TestExtractNotes(t *testing.T) {
	old := "# Benchmarks\n...\n" + notesOpen + "\nkept *as is*\n\n- item\n" + notesClose + "\n"
	assert.Equal(t, "\nkept *as is*\n\n- item\n", extractNotes(old))
	assert.Equal(t, defaultNotes, extractNotes("no markers"))
	assert.Equal(t, defaultNotes, extractNotes(notesOpen+" unterminated"))
}

func TestFormats(t *testing.T) {
	assert.Equal(t, "10,000", groupDigits(10_000))
	assert.Equal(t, "1,000,000,000 per hour", memQuota.String())
	assert.Equal(t, "12.3k", fmtRate(12_345))
	assert.Equal(t, "0.91–1.40×", span([]float64{1.4, 0.91, 1.1}, fmtRatio))
}
