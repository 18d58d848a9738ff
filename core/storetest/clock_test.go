package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestStartIsAWindowBoundary(t *testing.T) {
	epoch := time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)
	since := Start().Sub(epoch)
	tests := []time.Duration{time.Second, 2 * time.Second, 10 * time.Second, time.Minute, 3 * time.Minute, time.Hour, 24 * time.Hour}
	for _, tt := range tests {
		t.Run(tt.String(), func(t *testing.T) {
			assert.Equal(t, time.Duration(0), since%tt, "Start is not a multiple of %v after the epoch", tt)
		})
	}
}

func TestClock(t *testing.T) {
	var zero Clock
	assert.Equal(t, Start(), zero.Now(), "the zero Clock reads Start")

	c := NewClock()
	assert.Equal(t, Start(), c.Now(), "NewClock reads Start")
	c.Advance(1500 * time.Millisecond)
	assert.Equal(t, Start().Add(1500*time.Millisecond), c.Now(), "after Advance(1.5s)")
	c.Advance(-time.Second)
	assert.Equal(t, Start().Add(500*time.Millisecond), c.Now(), "after Advance(-1s)")
	c.Set(Start().Add(time.Hour))
	assert.Equal(t, Start().Add(time.Hour), c.Now(), "after Set(Start + 1h)")
	c.SetOffset(time.Minute)
	assert.Equal(t, Start().Add(time.Minute), c.Now(), "after SetOffset(1m)")
}

func TestClockIsSafeForConcurrentUse(t *testing.T) {
	c := NewClock()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Advance(time.Microsecond)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, Start().Add(800*time.Microsecond), c.Now())
}
