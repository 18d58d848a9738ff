package storetest

import (
	"sync"
	"time"
)

// Start returns the instant every [Clock] starts at: 2025-01-01T00:00:00Z.
// It lies exactly 366 days after the stores' epoch 2024-01-01T00:00:00Z,
// so it is a window boundary for every Period that divides a day (a
// second, 2 s, 10 s, a minute, 3 minutes, an hour, a day): in the suite's
// tables an offset from Start is also the time elapsed in the window.
func Start() time.Time {
	return time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)
}

// A Clock is a manual clock for stores under test: it reads [Start] plus
// an offset that only changes when told to. The zero value reads Start. A
// Clock is safe for concurrent use; pass its Now method as a store's
// clock.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// NewClock returns a [Clock] reading [Start].
func NewClock() *Clock { return &Clock{} }

// Now returns the clock's current instant.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Start().Add(c.offset)
}

// Advance moves the clock by d, backwards when d is negative.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// Set moves the clock to instant t, which may be earlier than the current
// one.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = t.Sub(Start())
}

// SetOffset moves the clock to [Start] + d; it is shorthand for
// Set(Start().Add(d)).
func (c *Clock) SetOffset(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = d
}
