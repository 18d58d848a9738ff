package main

import (
	"flag"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"no command", nil, exitError, "", "usage: ratelimit <command>"},
		{"help", []string{"help"}, exitOK, "usage: ratelimit <command>", ""},
		{"unknown command", []string{"purge"}, exitError, "", `unknown command "purge"`},
		{"inspect without identity", []string{"inspect"}, exitError, "", "inspect takes one identity"},
		{"reset with two identities", []string{"reset", "a", "b"}, exitError, "", "reset takes one identity"},
		{"audit -h", []string{"audit", "-h"}, exitOK, "", "usage: ratelimit audit"},
		{"unknown flag", []string{"audit", "--frobnicate"}, exitError, "", "flag provided but not defined: -frobnicate"},
		{"bad limit spec", []string{"inspect", "a", "--limit", "10"}, exitError, "", "want [name=]RATE/PERIOD"},
		{"unknown recipe tier", []string{"inspect", "a", "--tier", "gold"}, exitError, "", `--tier "gold": not a tier of the recipe`},
		{"--route with --tag", []string{"inspect", "x", "--tag", "--route", "/a"}, exitError, "", "--route and --tag exclude each other"},
		{"bad tag", []string{"reset", "a}b", "--tag"}, exitError, "", "a tag is non-empty and has no braces"},
		{"bad prefix", []string{"audit", "--prefix", "r{l"}, exitError, "", `ratelimit: key prefix "r{l" has byte '{' at 1; use letters, digits, '_', '-' and '.' (--prefix)`},
		{"help names the exit statuses", []string{"help"}, exitOK, "3 audit found\nno keys at all", ""},
		{"negative --top", []string{"audit", "--top", "-1"}, exitError, "", "--top must not be negative"},
		{"identity and parts", []string{"inspect", "a", "--part", "b"}, exitError, "", "inspect takes an identity or --part/--form-part flags, not both"},
		{"--part with --tag", []string{"reset", "--part", "a", "--tag"}, exitError, "", "--part and --tag exclude each other"},
		{"--form-part without a field", []string{"inspect", "--form-part", "alice"}, exitError, "", `invalid value "alice" for flag -form-part: want FIELD=VALUE`},
		{"--form-part with an empty value", []string{"tag", "--form-part", "account="}, exitError, "", `invalid value "account=" for flag -form-part: ratelimit: keyfunc: form field "account"`},
		{"tag -h", []string{"tag", "-h"}, exitOK, "", "usage: ratelimit tag <identity>"},
		{"tag without identity", []string{"tag"}, exitError, "", "tag takes one identity (or --part/--form-part flags for a composite one)"},
		{"tag of an identity", []string{"tag", "alice"}, exitOK, "alice\n", `identity "alice": keys rl:{alice}:*`},
		{"tag of a hashed identity", []string{"tag", "user with spaces"}, exitOK, core.SafeIdentity("user with spaces") + "\n", "(hashed: "},
		{"tag of parts", []string{"tag", "--part", "a:b", "--part", "c"}, exitOK, core.Identity("a:b", "c") + "\n", `identity "3:a:b|1:c" = core.Identity("a:b", "c")`},
		{"tag of a route-scoped identity", []string{"tag", "--route", "/login", "1.2.3.4"}, exitOK, core.Identity("/login", "1.2.3.4") + "\n", "scoped to its route"},
		{"tag --pattern escapes glob bytes", []string{"tag", "--pattern", "--prefix", "rl:api", "a*b"}, exitOK, `rl:api:{a\*b}:*` + "\n", ""},
		{"override without a subcommand", []string{"override"}, exitError, "", "override takes set, get, list or rm"},
		{"override set without a reason", []string{"override", "set", "a", "--limit", "h=10/1h"}, exitError, "", "override set: --reason is required"},
		{"override set without limits", []string{"override", "set", "a", "--reason", "r"}, exitError, "", "give --tier or --limit"},
		{"override set --for and --until", []string{"override", "set", "a", "--tier", "pro", "--for", "1h", "--until", "2099-01-01T00:00:00Z", "--reason", "r"},
			exitError, "", "--for and --until exclude each other"},
		{"override set bad --until", []string{"override", "set", "a", "--tier", "pro", "--until", "tomorrow", "--reason", "r"}, exitError, "", `--until "tomorrow": want an RFC 3339 time`},
		{"override set bad --for", []string{"override", "set", "a", "--tier", "pro", "--for", "soon", "--reason", "r"}, exitError, "", `invalid value "soon" for flag -for`},
		{"override set negative --for", []string{"override", "set", "a", "--tier", "pro", "--for", "-1h", "--reason", "r"}, exitError, "", "--for -1h0m0s: want a positive duration"},
		{"override set bad --limit", []string{"override", "set", "a", "--limit", "10", "--reason", "r"}, exitError, "", "want [name=]RATE/PERIOD"},
		{"block without --for", []string{"block", "a", "--reason", "r"}, exitError, "", "block: --for is required"},
		{"block without a reason", []string{"block", "a", "--for", "1h"}, exitError, "", "block: --reason is required"},
		{"block without a client", []string{"block", "--for", "1h", "--reason", "r"}, exitError, "", "block takes one identity"},
		{"exempt without a reason", []string{"exempt", "a"}, exitError, "", "exempt: --reason is required"},
		{"blocks takes no client", []string{"blocks", "a"}, exitError, "", "blocks takes no arguments"},
		{"block on PostgreSQL", []string{"block", "a", "--for", "1h", "--reason", "r", "--postgres", "postgres://x@127.0.0.1:1/x"}, exitError, "", "the PostgreSQL store keeps no controls"},
		{"help names the control commands", []string{"help"}, exitOK, "override set|get|list|rm", ""},
		{"tag with a bad prefix", []string{"tag", "--prefix", "r l", "a"}, exitError, "", "(--prefix)"},
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

func TestRunRejectsBadConnectionFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		secret  string // must not appear in the output
	}{
		{"URL without scheme", []string{"--redis", "localhost:6379"}, "invalid URL scheme: localhost; want redis://", ""},
		{"http URL", []string{"--redis", "http://localhost:6379"}, "invalid URL scheme: http", ""},
		{"bad db, password hidden", []string{"--redis", "redis://user:s3cret@localhost/x"}, `redis://user:xxxxx@localhost/x: redis: invalid database number: "x"`, "s3cret"},
		{"unparseable URL, not echoed", []string{"--redis", "redis://user:s3cret@[::1"}, "--redis: not a valid URL", "s3cret"},
		{"unknown URL option", []string{"--redis", "redis://localhost?frob=1"}, "unexpected option: frob", ""},
		{"cluster seed without port", []string{"--cluster", "a:1,b"}, `--cluster: "b" is not host:port`, ""},
		{"cluster URL with bad scheme", []string{"--cluster", "http://a:1"}, "invalid URL scheme: http", ""},
		{"sentinel without master", []string{"--sentinel", "a:26379"}, "--sentinel needs the master's name", ""},
		{"master without sentinel", []string{"--sentinel-master", "m"}, "--sentinel-master needs --sentinel", ""},
		{"two deployments", []string{"--redis", "redis://a", "--cluster", "b:1"}, "use only one of --redis, --cluster and --sentinel", ""},
		{"zero timeout", []string{"--timeout", "0s"}, "--dial-timeout and --timeout must be positive", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, append([]string{"audit"}, tt.args...)...)
			assert.Equal(t, exitError, code)
			assert.Contains(t, stderr, tt.wantErr)
			if tt.secret != "" {
				assert.NotContains(t, stdout+stderr, tt.secret)
			}
		})
	}
}

func TestRunSaysWhichServer(t *testing.T) {
	srv := redistest.Standalone(t)
	closed := closedAddr(t)
	tests := []struct {
		name     string
		vars     map[string]string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"--redis", nil, []string{"--redis", "redis://" + srv.Addr()}, exitOK, "redis standalone " + srv.Addr() + " db 0\n"},
		{"--redis with a db", nil, []string{"--redis", "redis://" + srv.Addr() + "/1"}, exitOK, "redis standalone " + srv.Addr() + " db 1\n"},
		{"$REDIS_URL", map[string]string{"REDIS_URL": "redis://" + srv.Addr()}, nil, exitOK, "redis standalone " + srv.Addr() + " db 0 (from $REDIS_URL)\n"},
		{"--redis wins over $REDIS_URL", map[string]string{"REDIS_URL": "redis://" + closed}, []string{"--redis", "redis://" + srv.Addr()}, exitOK, "redis standalone " + srv.Addr() + " db 0\n"},
		{"unreachable $REDIS_URL", map[string]string{"REDIS_URL": "redis://" + closed}, nil, exitError, "ratelimit: cannot reach Redis (standalone " + closed + ", from $REDIS_URL): dial tcp"},
		{"bad $REDIS_URL", map[string]string{"REDIS_URL": "localhost:6379"}, nil, exitError, "ratelimit: $REDIS_URL localhost:6379: redis: invalid URL scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A tag no test writes: the command talks to the server and finds nothing.
			args := append([]string{"reset", "nobody-" + redistest.Prefix(t), "--dry-run"}, tt.args...)
			code, _, stderr := cliEnv(t, tt.vars, args...)
			assert.Equal(t, tt.wantCode, code)
			if tt.wantCode == exitOK {
				assert.Equal(t, tt.wantErr, stderr, "the server line, alone, on stderr")
			} else {
				assert.Contains(t, stderr, tt.wantErr)
			}
		})
	}
	t.Run("the default address says so", func(t *testing.T) {
		// Whether or not a server listens on localhost:6379 here, the
		// server line or the error says the address was nobody's choice.
		_, _, stderr := cli(t, "reset", "nobody-"+redistest.Prefix(t), "--dry-run", "--dial-timeout", "200ms", "--timeout", "200ms")
		assert.Contains(t, stderr, "standalone localhost:6379")
		assert.Contains(t, stderr, "the default address: no --redis, --cluster, --sentinel or $REDIS_URL given")
	})
}

func TestInspectDoesNotWarnAboutItsOwnClient(t *testing.T) {
	srv := redistest.Standalone(t)
	var c connFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.register(fs)
	require.NoError(t, fs.Parse([]string{"--redis", "redis://" + srv.Addr()}))
	d, err := c.deployment(func(string) string { return "" })
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.client.Close() })
	require.NotEmpty(t, redisstore.CheckClient(d.client, 0), "precondition: the tool's client retries, which redisstore.New warns about")

	// cli fails the test if anything is logged on slog.Default.
	code, _, stderr := cli(t, "inspect", "alice", "--redis", "redis://"+srv.Addr(), "--prefix", redistest.Prefix(t), "--limit", "hourly=100/1h")

	require.Equal(t, exitOK, code)
	assert.Equal(t, serverLine(srv.Addr()), stderr)
}

func TestRunReportsUnreachableServers(t *testing.T) {
	closed := closedAddr(t)
	silent := silentAddr(t)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"refused", []string{"audit", "--redis", "redis://" + closed}, "ratelimit: cannot reach Redis (standalone " + closed + "): dial tcp " + closed},
		{"refused, cluster", []string{"inspect", "a", "--cluster", closed}, "ratelimit: cannot reach Redis (cluster " + closed + ")"},
		{"refused, sentinel", []string{"reset", "a", "--sentinel", closed, "--sentinel-master", "m"}, "all sentinels specified in configuration are unreachable"},
		{"accepts but never answers", []string{"audit", "--redis", "redis://" + silent, "--timeout", "100ms", "--dial-timeout", "100ms"}, "ratelimit: cannot reach Redis (standalone " + silent + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(t, tt.args...)
			assert.Equal(t, exitError, code)
			assert.Contains(t, stderr, tt.wantErr)
		})
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// silentAddr returns the address of a listener that accepts connections
// (the kernel does, from its backlog) but never answers.
func silentAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l.Addr().String()
}

func TestParseArgsAllowsFlagsAfterArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantPos []string
		wantV   bool
	}{
		{"flags first", []string{"-v", "alice"}, []string{"alice"}, true},
		{"flags after", []string{"alice", "-v"}, []string{"alice"}, true},
		{"no flags", []string{"alice"}, []string{"alice"}, false},
		{"-- ends flags", []string{"--", "-v"}, []string{"-v"}, false},
		{"-- after an argument", []string{"alice", "--", "-v"}, []string{"alice", "-v"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			v := fs.Bool("v", false, "")
			pos, _, ok := parseArgs(fs, tt.args)
			require.True(t, ok)
			assert.Equal(t, tt.wantPos, pos)
			assert.Equal(t, tt.wantV, *v)
		})
	}
}
