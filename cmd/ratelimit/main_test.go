package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// cli runs the command line args in process, with an empty environment.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cliEnv(t, nil, args...)
}

// cliEnv runs the command line args in process with the environment
// variables vars, and checks that nothing was logged on slog.Default: the
// tool must not warn about its own client the way redisstore.New warns
// about an application's.
func cliEnv(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cliStdin(t, vars, nil, args...)
}

// cliStdin is cliEnv with stdin as the command's standard input.
func cliStdin(t *testing.T, vars map[string]string, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut, logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	code = run(context.Background(), args, env{stdin: stdin, stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }})
	slog.SetDefault(prev)
	t.Logf("ratelimit %q: exit %d\n%s%s", args, code, out.String(), errOut.String())
	assert.NotContains(t, errOut.String(), "goroutine ", "no stack traces")
	assert.Empty(t, logged.String(), "nothing logged on slog.Default")
	return code, out.String(), errOut.String()
}

// newLimiter returns a limiter over the Redis store on client, keyed under
// prefix, with limits in its default tier.
func newLimiter(t *testing.T, client redis.UniversalClient, prefix string, limits ...core.Limit) *core.Limiter {
	t.Helper()
	store, err := redisstore.New(client)
	require.NoError(t, err)
	l, err := core.NewLimiter(store, core.WithPrefix(prefix), core.WithLimits(limits...))
	require.NoError(t, err)
	return l
}

// take makes n requests of identity through l; each must be decided by
// the store.
func take(t *testing.T, l *core.Limiter, identity string, n int) {
	t.Helper()
	for range n {
		res, err := l.Allow(context.Background(), identity)
		require.NoError(t, err)
		require.False(t, res.Degraded, "decided by Redis")
	}
}

// cleanPrefix deletes the keys under prefix when t ends.
func cleanPrefix(t *testing.T, client redis.UniversalClient, prefix string) {
	t.Cleanup(func() {
		for _, k := range redistest.ScanKeys(t, client, prefix+":*") {
			client.Del(context.Background(), k)
		}
	})
}

// line builds a regexp matching one whole output line made of fields
// separated by tabwriter padding.
func line(fields ...string) *regexp.Regexp {
	expr := `(?m)^\s*`
	for i, f := range fields {
		if i > 0 {
			expr += `\s+`
		}
		expr += regexp.QuoteMeta(f)
	}
	return regexp.MustCompile(expr + `\s*$`)
}

// serverLine is the line every command prints first for the standalone
// server at addr, db 0, named by --redis.
func serverLine(addr string) string {
	return "redis standalone " + addr + " db 0\n"
}
