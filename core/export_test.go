package core

import "time"

// SetWaitSeams makes l's WaitTake sleep on timer and add jitter (nil keeps
// the default), for tests with a fake clock.
func SetWaitSeams(l *Limiter, timer func(time.Duration) (<-chan time.Time, func() bool), jitter func(time.Duration) time.Duration) {
	l.waitTimer, l.waitJitter = timer, jitter
}

// WaitJitter is the default jitter of a wait of d.
func WaitJitter(l *Limiter, d time.Duration) time.Duration { return l.jitter(maxJitter(d)) }
