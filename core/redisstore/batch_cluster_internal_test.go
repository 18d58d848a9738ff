package redisstore

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRedirection: only MOVED and ASK replies (the node ran nothing) send
// a pipelined take again through the cluster client; every other error,
// READONLY and transport failures included, fails the take.
func TestRedirection(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{redisError("MOVED 3999 127.0.0.1:6381"), true},
		{redisError("ASK 3999 127.0.0.1:6381"), true},
		{redisError("READONLY You can't write against a read only replica."), false},
		{redisError("NOSCRIPT No matching script. Please use EVAL."), false},
		{redisError("CLUSTERDOWN The cluster is down"), false},
		{redisError("TRYAGAIN Multiple keys request during rehashing of slot"), false},
		{redisError("ERR Error running script"), false},
		{io.EOF, false},
		{context.DeadlineExceeded, false},
		{errors.New("MOVED 3999 127.0.0.1:6381"), false}, // not a reply
		{nil, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, redirection(tt.err), "redirection(%v)", tt.err)
	}
}

// reply is a Redis error reply, as go-redis's own (redis.Error).
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

func redisError(msg string) error { return reply(msg) }
