package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// writePolicy writes doc to a file in a new directory and returns its path.
func writePolicy(t *testing.T, name, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const cliPolicy = `version: 1
limiters:
  api:
    default_tier: free
    tiers:
      free:
        - {name: burst, rate: 10, period: 1s, burst: 100}
        - {name: daily, rate: 1000, period: 24h, algorithm: fixed_window}
      pro:
        - {name: burst, rate: 100, period: 1s, burst: 1000}
  login:
    tiers:
      default:
        - {name: login, rate: 5, period: 1m, algorithm: sliding_log}
`

// A valid file: its summary on stdout; an invalid one: its first error,
// alone, as FILE:LINE: path: what, and exit status 1.
func TestPolicyCheck(t *testing.T) {
	good := writePolicy(t, "policy.yaml", cliPolicy)
	code, stdout, stderr := cli(t, "policy", "check", good)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, good+`: version 1, 2 limiters
limiter api
  tier free (default)  burst  10 per 1s, burst 100, gcra
                       daily  1000 per 24h, fixed_window
  tier pro             burst  100 per 1s, burst 1000, gcra
limiter login
  tier default (default)  login  5 per 1m, sliding_log
`, stdout)
	assert.Empty(t, stderr)

	bad := writePolicy(t, "bad.yaml", replace(t, cliPolicy, "algorithm: sliding_log}", "algorithm: sliding_log, burst: 7}"))
	code, stdout, stderr = cli(t, "policy", "check", bad)
	assert.Equal(t, exitFindings, code)
	assert.Empty(t, stdout)
	assert.Equal(t, bad+":14: limiters.login.tiers.default[0].burst: Burst 7 differs from Rate 5, but sliding_log counts Rate per Period and has no separate burst\n", stderr)
}

func TestPolicyUsage(t *testing.T) {
	good := writePolicy(t, "policy.yaml", cliPolicy)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"missing file", []string{"policy", "check", filepath.Join(t.TempDir(), "none.yaml")}, exitError, "", "no such file or directory"},
		{"no file", []string{"policy", "check"}, exitError, "", "ratelimit: policy check takes one file, got 0 arguments"},
		{"two files", []string{"policy", "check", good, good}, exitError, "", "ratelimit: policy check takes one file, got 2 arguments"},
		{"diff of one file", []string{"policy", "diff", good}, exitError, "", "ratelimit: policy diff takes two files, OLD and NEW, got 1 arguments"},
		{"no subcommand", []string{"policy"}, exitError, "", "usage: ratelimit policy check FILE"},
		{"unknown subcommand", []string{"policy", "apply", good}, exitError, "", `ratelimit: policy: unknown command "apply"`},
		{"help", []string{"policy", "help"}, exitOK, "usage: ratelimit policy check FILE", ""},
		{"check -h", []string{"policy", "check", "-h"}, exitOK, "", "usage: ratelimit policy check FILE"},
		{"listed in the tool's help", []string{"help"}, exitOK, "policy diff OLD NEW", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, tt.args...)
			assert.Equal(t, tt.wantCode, code)
			assert.Contains(t, stdout, tt.wantOut)
			assert.Contains(t, stderr, tt.wantErr)
		})
	}
}

func TestPolicyDiff(t *testing.T) {
	old := writePolicy(t, "old.yaml", cliPolicy)
	same := writePolicy(t, "same.yaml", cliPolicy)
	raised := writePolicy(t, "raised.yaml", replace(t, cliPolicy, "rate: 1000, period: 24h", "rate: 2000, period: 24h"))
	grown := writePolicy(t, "grown.yaml", replace(t, cliPolicy, "rate: 1000, period: 24h", "rate: 1000, period: 48h"))
	invalid := writePolicy(t, "invalid.yaml", "version: 1\n")

	code, stdout, stderr := cli(t, "policy", "diff", old, same)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "no changes\n", stdout)
	assert.Empty(t, stderr)

	code, stdout, _ = cli(t, "policy", "diff", old, raised)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, `limiter api
  tier free
    ~ daily: rate 1000 -> 2000
  counters
    kept     daily (fixed_window): each client's count carries over, read against the new numbers
`, stdout)

	code, stdout, stderr = cli(t, "policy", "diff", old, grown)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "~ daily: period 24h -> 48h")
	assert.Contains(t, stdout, "kept     daily (fixed_window): the window grows from 24h to 48h")
	assert.Empty(t, stderr)

	code, _, stderr = cli(t, "policy", "diff", old, invalid)
	assert.Equal(t, exitError, code)
	assert.Equal(t, invalid+":1: limiters: missing: a policy has limiters (or, for one limiter, tiers)\n", stderr)

}

func replace(t *testing.T, s, old, new string) string {
	t.Helper()
	r := strings.Replace(s, old, new, 1)
	if r == s {
		t.Fatalf("%q not in the document", old)
	}
	return r
}
