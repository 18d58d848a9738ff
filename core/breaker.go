package core

import (
	"fmt"
	"sync"
	"time"
)

// BreakerState is the state of the circuit breaker around the store.
type BreakerState uint8

const (
	// BreakerClosed: calls go to the store.
	BreakerClosed BreakerState = iota
	// BreakerOpen: the store failed repeatedly; calls fail at once, with no
	// store call, until the cool-down ends.
	BreakerOpen
	// BreakerHalfOpen: the cool-down ended; one probe call goes to the
	// store, the others fail at once until it answers.
	BreakerHalfOpen
)

// String returns "closed", "open" or "half_open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half_open"
	}
	return "unknown"
}

// BreakerConfig tunes the circuit breaker of a [Limiter] ([WithBreaker]).
// The zero value means the defaults.
type BreakerConfig struct {
	// Failures is how many consecutive store failures open the breaker
	// (default 5).
	Failures int
	// OpenFor is how long the breaker stays open before it lets one probe
	// through (default 500 ms: a rate limiter wants to enforce again soon
	// after the store recovers, unlike the 60 s of generic breakers).
	OpenFor time.Duration
}

// breakerConfig returns the breaker a limiter gets, if any: the one of
// WithBreaker, else the default one unless WithoutBreaker said no or the
// store never blocks.
func (c *config) breakerConfig(nonBlocking bool) (BreakerConfig, bool) {
	switch {
	case c.breaker != nil:
		return *c.breaker, true
	case c.noBreaker || nonBlocking:
		return BreakerConfig{}, false
	}
	cfg, _ := BreakerConfig{}.withDefaults() // the defaults are valid
	return cfg, true
}

func (c BreakerConfig) withDefaults() (BreakerConfig, error) {
	if c.Failures < 0 {
		return c, fmt.Errorf("ratelimit: breaker Failures must not be negative, got %d", c.Failures)
	}
	if c.OpenFor < 0 {
		return c, fmt.Errorf("ratelimit: breaker OpenFor must not be negative, got %s", c.OpenFor)
	}
	if c.Failures == 0 {
		c.Failures = 5
	}
	if c.OpenFor == 0 {
		c.OpenFor = 500 * time.Millisecond
	}
	return c, nil
}

// breaker counts consecutive failures. It is a plain state machine over an
// injected clock; it starts no goroutine.
type breaker struct {
	cfg      BreakerConfig
	now      clockFunc
	onChange func(from, to BreakerState)

	mu       sync.Mutex
	state    BreakerState
	failures int
	openedAt time.Time
	probing  bool
}

// allow reports whether a call may go to the store now. In half-open state
// only one caller at a time gets true: the probe.
func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerClosed:
		return true
	case BreakerOpen:
		if b.now().Sub(b.openedAt) < b.cfg.OpenFor {
			return false
		}
		b.setState(BreakerHalfOpen)
	}
	if b.probing {
		return false
	}
	b.probing = true
	return true
}

// done records the outcome of a call that allow let through. failed is
// true only for failures that say the store is unavailable; abandoned calls
// (the caller gave up) say nothing about the store and change no state.
func (b *breaker) done(failed, abandoned bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if abandoned {
		return
	}
	if !failed {
		b.failures = 0
		b.setState(BreakerClosed)
		return
	}
	b.failures++
	if b.state == BreakerHalfOpen || b.failures >= b.cfg.Failures {
		b.openedAt = b.now()
		b.setState(BreakerOpen)
	}
}

func (b *breaker) current() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// setState changes the state and reports the change; b.mu is held.
func (b *breaker) setState(s BreakerState) {
	if s == b.state {
		return
	}
	from := b.state
	b.state = s
	if b.onChange != nil {
		b.onChange(from, s)
	}
}
