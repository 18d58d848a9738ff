package redisstore

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ratelimitkit/ratelimit/core"
)

// go-redis's errors for a pooled connection whose socket is gone are
// transport failures: a limiter applies its failure mode to them, never
// reports them as bugs (a candidate for the one error TestClusterManualFailover
// saw once, during a failover, 6 ms into it).
func TestConnectionNotAvailableIsUnavailable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{errors.New("redis: connection not available"), true},
		{errors.New("redis: connection not available for write operation"), true},
		{errors.New("ERR user_script:1: Script attempted to access nonexistent global variable"), false},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			assert.Equal(t, tt.want, errors.Is(classify(tt.err), core.ErrStoreUnavailable))
		})
	}
}
