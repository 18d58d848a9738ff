package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ratelimitkit/ratelimit/core/storetest"
)

type countingReloader struct{ n atomic.Int64 }

func (c *countingReloader) ReloadState(context.Context) { c.n.Add(1) }

func TestReloaderCoalescesBursts(t *testing.T) {
	clock := storetest.NewClock()
	client := &countingReloader{}
	r := newReloader(client, 100*time.Millisecond, clock.Now)
	ctx := context.Background()

	var wg sync.WaitGroup
	for range 8 { // a burst of failures at one instant, from many goroutines
		wg.Go(func() {
			for range 100 {
				r.failed(ctx)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(1), client.n.Load(), "one reload per burst")

	clock.Advance(99 * time.Millisecond)
	r.failed(ctx)
	assert.Equal(t, int64(1), client.n.Load(), "none within 100 ms")

	clock.Advance(time.Millisecond)
	r.failed(ctx)
	assert.Equal(t, int64(2), client.n.Load(), "the next one 100 ms later")

	for range 1000 { // failures every ms for a second
		clock.Advance(time.Millisecond)
		r.failed(ctx)
	}
	assert.Equal(t, int64(12), client.n.Load(), "ten more in a second")
}

func TestClassifyKeepsBothErrors(t *testing.T) {
	err := classify(context.DeadlineExceeded)

	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "ratelimit: store unavailable: context deadline exceeded", err.Error())
}
