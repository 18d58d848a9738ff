package core

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shardedStore is a store of two shards, "a" (identities starting with a)
// and "b" (the rest); the shards listed in down fail as unavailable.
type shardedStore struct {
	recordingStore
	mu   sync.Mutex
	down map[string]bool
}

func (s *shardedStore) Capabilities() Capabilities {
	c := s.recordingStore.Capabilities()
	c.Shard = s.Shard
	return c
}

func (s *shardedStore) Shard(key string) string {
	if strings.Contains(key, "{a") {
		return "a"
	}
	return "b"
}

func (s *shardedStore) Take(ctx context.Context, dst []Decision, keys []string, limits []Limit, cost int64) ([]Decision, error) {
	s.mu.Lock()
	down := s.down[s.Shard(keys[0])]
	s.mu.Unlock()
	if down {
		return dst, errDown
	}
	return s.recordingStore.Take(ctx, dst, keys, limits, cost)
}

func (s *shardedStore) setDown(shard string, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down[shard] = down
}

func TestBreakerPerShard(t *testing.T) {
	clock := newManualClock()
	store := &shardedStore{down: map[string]bool{}}
	obs := &recordingObserver{}
	store.now = clock.Now // the limiter follows its store's clock
	l := MustNewLimiter(store, WithLimits(PerSecond(1000)), WithObserver(obs),
		WithBreaker(BreakerConfig{Failures: 2, OpenFor: time.Second}))
	ctx := context.Background()
	allow := func(id string) Result {
		t.Helper()
		res, err := l.Allow(ctx, id)
		require.NoError(t, err)
		return res
	}

	store.setDown("a", true)
	for range 3 {
		assert.True(t, allow("a1").Degraded)
	}
	assert.ErrorIs(t, allow("a2").Err, ErrBreakerOpen, "shard a's breaker is open for all its clients")
	assert.False(t, allow("b1").Degraded, "shard b is still decided by the store")
	assert.Equal(t, BreakerOpen, l.BreakerState(), "the limiter reports the worst shard")

	store.setDown("a", false)
	clock.Advance(time.Second)
	assert.False(t, allow("a1").Degraded, "the probe closed shard a's breaker")
	assert.Equal(t, BreakerClosed, l.BreakerState())
	assert.Equal(t, []BreakerState{BreakerOpen, BreakerHalfOpen, BreakerClosed}, obs.breakers)
}

// A shard that no call asks for any more (a failed-over master) must not
// keep the limiter's state open.
func TestBreakerOfAnIdleShardIsDropped(t *testing.T) {
	clock := newManualClock()
	store := &shardedStore{down: map[string]bool{"a": true}}
	obs := &recordingObserver{}
	store.now = clock.Now // the limiter follows its store's clock
	l := MustNewLimiter(store, WithLimits(PerSecond(1000)), WithObserver(obs),
		WithBreaker(BreakerConfig{Failures: 1, OpenFor: time.Second}))
	ctx := context.Background()

	_, err := l.Allow(ctx, "a1")
	require.NoError(t, err)
	require.Equal(t, BreakerOpen, l.BreakerState())

	clock.Advance(time.Second) // not idle for 2 × OpenFor yet
	_, err = l.Allow(ctx, "b1")
	require.NoError(t, err)
	assert.Equal(t, BreakerOpen, l.BreakerState())

	clock.Advance(time.Second + time.Millisecond)
	_, err = l.Allow(ctx, "b1")
	require.NoError(t, err)
	assert.Equal(t, BreakerClosed, l.BreakerState(), "shard a's breaker was dropped")
	assert.Equal(t, []BreakerState{BreakerOpen, BreakerClosed}, obs.breakers)

	res, err := l.Allow(ctx, "a1")
	require.NoError(t, err)
	assert.NotErrorIs(t, res.Err, ErrBreakerOpen, "shard a starts over with a closed breaker")
	assert.True(t, res.Degraded, "and is still down")
}

func TestBreakerShardsAreBounded(t *testing.T) {
	bs := newBreakers(BreakerConfig{Failures: 1, OpenFor: time.Hour}, newManualClock().Now, nil)
	for i := range maxShards + 10 {
		bs.forShard(strings.Repeat("x", i+1))
	}
	assert.Len(t, bs.shards, maxShards)
	assert.Same(t, bs.unsharded, bs.forShard("one too many"))
}

// Shards changing state from many goroutines keep the counts consistent:
// when every shard is closed again, so is the limiter.
func TestBreakerShardsConcurrently(t *testing.T) {
	clock := newManualClock()
	bs := newBreakers(BreakerConfig{Failures: 1, OpenFor: time.Millisecond}, clock.Now, nil)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				b := bs.forShard(string(rune('a' + (g+i)%8)))
				if b.allow() {
					b.done(i%3 == 0, false)
				}
				if i%50 == 0 {
					clock.Advance(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	clock.Advance(time.Hour) // every shard idle: swept at the next call
	bs.forShard("z")
	assert.Equal(t, BreakerClosed, bs.current())
	assert.Equal(t, [3]int{2, 0, 0}, bs.count, "the unsharded breaker and z, closed")
}
