package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// An operator names a client by its API key, read from stdin, and finds the
// keys the key function made for a request bearing it; the secret is in no
// argument and in no output.
func TestAPIKeyFromStdinNamesTheClient(t *testing.T) {
	srv := redistest.Standalone(t)
	client := srv.Client(t)
	prefix := redistest.Prefix(t)
	l := newLimiter(t, client, prefix, hourly)
	const secret = "sk_live_0123456789abcdef"
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-API-Key", secret)
	id, err := keyfunc.ByAPIKeyOrIP("X-API-Key")(r)
	require.NoError(t, err)
	take(t, l, id, 1)
	take(t, l, "203.0.113.7", 1)
	conn := []string{"--redis", "redis://" + srv.Addr(), "--prefix", prefix}

	code, stdout, stderr := cliStdin(t, nil, strings.NewReader(secret+"\n"), append([]string{"inspect", "--api-key-stdin"}, conn...)...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, core.SafeIdentity(id))
	assert.NotContains(t, stdout+stderr, secret, "the secret is never printed")

	code, stdout, _ = cliStdin(t, nil, strings.NewReader(secret), append([]string{"reset", "--api-key-stdin"}, conn...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "1 keys deleted\n", "a key without a line end is read too")
	assert.Empty(t, redistest.ScanKeys(t, client, prefix+":{"+globEscape(core.SafeIdentity(id))+"}:*"))
	assert.Len(t, redistest.ScanKeys(t, client, prefix+":{203.0.113.7}:*"), 1, "other clients keep their keys")
}

func TestAPIKeyFromStdinRefusesWhatCannotBeAKey(t *testing.T) {
	for _, c := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"empty", "\n", nil, "empty or longer"},
		{"too long", strings.Repeat("k", keyfunc.MaxSecretBytes+1), nil, "empty or longer"},
		{"and an identity", "k\n", []string{"alice"}, "give no identity"},
		{"and a tag", "k\n", []string{"--tag"}, "give no identity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// reset has --tag; the name is checked before any connection.
			code, _, stderr := cliStdin(t, nil, strings.NewReader(c.stdin), append([]string{"reset", "--api-key-stdin"}, c.args...)...)
			assert.Equal(t, exitError, code)
			assert.Contains(t, stderr, c.want)
		})
	}
}
