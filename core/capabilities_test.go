package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
)

// statedStore is a plainStore that states caps.
type statedStore struct {
	plainStore
	caps core.Capabilities
}

func (s statedStore) Capabilities() core.Capabilities { return s.caps }

func TestAStoreThatStatesNothingHasNoCapabilities(t *testing.T) {
	caps := core.CapabilitiesOf(plainStore{})
	assert.False(t, caps.NonBlocking)
	assert.Nil(t, caps.Shard)
	assert.Nil(t, caps.Clock)
	assert.Nil(t, caps.CheckTimeout)
	assert.False(t, caps.Leases)
}

// Leases is a statement the limiter checks against the methods: a store
// that states it without being a Leaser is a construction error, not a
// panic at the first request.
func TestLimiterRefusesLeasesStatedWithoutTheMethods(t *testing.T) {
	store := statedStore{caps: core.Capabilities{Leases: true}}
	_, err := core.NewLimiter(store, core.WithLimits(core.Concurrent(2)))
	require.Error(t, err)
	assert.ErrorContains(t, err, `limit "2-in-flight" is a Concurrency limit, but the store core_test.statedStore does not implement core.Leaser (its Capabilities state Leases, but it lacks Leaser's methods)`)
}

// A Leaser's methods without the statement are not enough: a wrapper that
// forwards them over a store that holds no leases cannot pass for one.
func TestLimiterRefusesLeaserMethodsWithoutTheStatement(t *testing.T) {
	_, err := core.NewLimiter(unstatedLeaser{}, core.WithLimits(core.Concurrent(2)))
	require.Error(t, err)
	assert.ErrorContains(t, err, "does not implement core.Leaser (its Capabilities do not state Leases)")
}

// unstatedLeaser has a Leaser's methods but states no capabilities.
type unstatedLeaser struct{ failingLeaser }

func (unstatedLeaser) Capabilities() core.Capabilities { return core.Capabilities{} }

func TestLimiterAsksTheStatedCheckTimeout(t *testing.T) {
	var asked time.Duration
	tooLong := errors.New("too long for the client")
	store := statedStore{caps: core.Capabilities{CheckTimeout: func(d time.Duration) error {
		asked = d
		return tooLong
	}}}
	_, err := core.NewLimiter(store, core.WithLimits(core.PerSecond(1)), core.WithTimeout(80*time.Millisecond))
	assert.ErrorIs(t, err, tooLong)
	assert.Equal(t, 80*time.Millisecond, asked)
}

func TestLimiterKeepsOneBreakerPerStatedShard(t *testing.T) {
	store := &downShards{down: "a", calls: map[string]int{}}
	store.caps = core.Capabilities{Shard: tagOf}
	l, err := core.NewLimiter(store, core.WithLimits(core.PerSecond(1)), core.WithFailureMode(core.FailClosed),
		core.WithBreaker(core.BreakerConfig{Failures: 1, OpenFor: time.Hour}))
	require.NoError(t, err)
	ctx := context.Background()
	for range 2 {
		res, _ := l.Take(ctx, core.Request{Identity: "a", Cost: 1})
		assert.False(t, res.Allowed, "shard a is down")
	}
	assert.Equal(t, 1, store.calls["a"], "the first failure opens the breaker of shard a")
	res, err := l.Take(ctx, core.Request{Identity: "b", Cost: 1})
	require.NoError(t, err)
	assert.True(t, res.Allowed, "shard b has its own breaker, still closed")
	assert.Equal(t, 1, store.calls["b"])
}

// tagOf returns the hash tag of key: each client is a shard of its own.
func tagOf(key string) string {
	_, rest, _ := strings.Cut(key, "{")
	tag, _, _ := strings.Cut(rest, "}")
	return tag
}

// downShards fails the takes of the clients of the down shard and counts
// the takes of each shard; one goroutine only.
type downShards struct {
	statedStore
	down  string
	calls map[string]int
}

func (s *downShards) Capabilities() core.Capabilities { return s.caps }

func (s *downShards) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	s.calls[tagOf(keys[0])]++
	if tagOf(keys[0]) == s.down {
		return dst, core.ErrStoreUnavailable
	}
	return s.plainStore.Take(ctx, dst, keys, limits, cost)
}
