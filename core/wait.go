package core

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

var (
	// ErrCostTooHigh is returned by [Limiter.WaitTake] (and Wait, WaitN)
	// when the cost is larger than the capacity of a limit of the client's
	// tier: no amount of waiting admits it. Split the work. The error
	// names the limit.
	ErrCostTooHigh = errors.New("ratelimit: cost exceeds a limit's capacity: waiting never admits it")
	// ErrWaitExceedsDeadline is returned by [Limiter.WaitTake] (and Wait,
	// WaitN), without sleeping, when ctx's deadline comes before the
	// earliest admission the store reported for a rate limit (a
	// [Concurrency] limit's RetryAfter is an estimate, not the earliest
	// admission). It wraps [context.DeadlineExceeded].
	ErrWaitExceedsDeadline = fmt.Errorf("ratelimit: wait would exceed the context deadline: %w", context.DeadlineExceeded)
)

// Wait is shorthand for WaitN(ctx, identity, 1).
func (l *Limiter) Wait(ctx context.Context, identity string) (Result, error) {
	return l.WaitN(ctx, identity, 1)
}

// WaitN is shorthand for WaitTake(ctx, Request{Identity: identity, Cost: n}).
func (l *Limiter) WaitN(ctx context.Context, identity string, n int64) (Result, error) {
	return l.WaitTake(ctx, Request{Identity: identity, Cost: n})
}

// WaitTake is [Limiter.Take] for callers outside HTTP (job workers,
// clients of a rate-limited API) that would rather wait their turn than be
// denied: it blocks until req is admitted, and returns the admitting
// Result, or until it fails. Between tries it sleeps the denial's
// RetryAfter plus a jitter of up to a tenth of it (at most 1 s), so that
// waiters of one client on many nodes do not all ask the store at the same
// instant; it never polls. Each try is one Take: observed, and served by
// the deny cache, like any other.
//
// A [Concurrency] limit's RetryAfter is only an upper bound (a lease comes
// back whenever a request ends, usually long before it expires), so when
// one binds the wait backs off instead: it sleeps 5 ms, then twice as long
// after each denial up to that RetryAfter, each step plus a jitter of up
// to half of it, never shorter than the exact RetryAfter of a rate limit
// that denied too, and never past ctx's deadline. Once the deadline has come
// it returns ctx's error, wrapped (a context that reached its deadline
// would be done by then).
//
// It returns an error, at once and without sleeping:
//   - [ErrCostTooHigh] when req.Cost exceeds the capacity of a limit of the
//     client's tier (of the fallback's share of it while failing local),
//     whether or not the store answers: waiting would never end (a
//     [Concurrency] limit takes one lease whatever the cost);
//   - [ErrWaitExceedsDeadline] when ctx has a deadline that comes before
//     the earliest admission the store reported (now + RetryAfter), as
//     x/time/rate's Wait does: sleeping into the deadline helps no one.
//     A Concurrency limit reports no earliest admission: only a rate
//     limit's RetryAfter counts;
//   - an error wrapping [ErrStoreUnavailable] when the store fails and the
//     limiter fails closed ([FailClosed]): not an endless wait;
//   - whatever Take returns (ErrInvalidCost, a store bug, ctx's error).
//
// A ctx that is done, before or during the sleep, gets ctx's error
// (wrapped: errors.Is(err, context.Canceled) holds). While the store fails
// and the limiter fails open the request is admitted at once (degraded);
// failing local, the fallback's decisions are waited for like the store's.
// In shadow mode ([WithShadow]) what the limits deny, even a cost that
// never fits, is admitted at once, as Take admits it: shadow never blocks.
// On error, the Result is the last denial when there was one (its Binding
// says why), else the zero Result. An admitting Result may hold a
// [Result.Lease]: give it back with [Limiter.Release] when the work ends.
func (l *Limiter) WaitTake(ctx context.Context, req Request) (Result, error) {
	var last Result        // the denial slept on
	var step time.Duration // the last backoff step on a Concurrency limit
	for {
		res, err := l.Take(ctx, req)
		if err != nil {
			return last, err
		}
		d, err := l.nextTry(ctx, req.Cost, res, &step)
		if d == 0 || err != nil {
			return res, err
		}
		if err := l.sleep(ctx, d); err != nil {
			return res, err
		}
		last = res
	}
}

// nextTry returns how long to sleep before taking again after res, 0 when
// res ends the wait, or why waiting cannot admit the request. step is the
// backoff on a Concurrency limit, which nextTry advances.
func (l *Limiter) nextTry(ctx context.Context, cost int64, res Result, step *time.Duration) (time.Duration, error) {
	if !l.shadow {
		if err := costFits(cost, res); err != nil {
			return 0, err
		}
	}
	if res.Allowed {
		return 0, nil
	}
	b := res.Binding()
	switch b.Reason {
	case Unavailable:
		cause := res.Err
		if cause == nil { // a store that says so itself
			cause = ErrStoreUnavailable
		}
		return 0, fmt.Errorf("ratelimit: wait: failing closed: %w", cause)
	case CostTooHigh: // a store whose capacity differs from the limit's
		return 0, fmt.Errorf("%w: cost %d, limit %q", ErrCostTooHigh, cost, b.Limit.Name)
	}
	if b.Limit.Algorithm.leased() {
		*step = nextLeaseStep(*step, b.RetryAfter)
		return l.leaseTry(ctx, rateWait(&res), *step)
	}
	d := b.RetryAfter
	if d <= 0 { // a store that reports no wait: one emission interval, never a poll
		d = b.Limit.Interval()
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return d + l.jitter(maxJitter(d)), nil
	}
	left := deadline.Sub(l.waitNow())
	if left < d {
		return 0, fmt.Errorf("%w: admission in %s", ErrWaitExceedsDeadline, d)
	}
	// Wake before the deadline, leaving half the slack for the take.
	return d + min(l.jitter(maxJitter(d)), (left-d)/2), nil
}

// firstLeaseStep is the first sleep of a wait that a [Concurrency] limit
// denied: a lease comes back whenever a request ends, so the wait asks
// again soon, then less and less often.
const firstLeaseStep = 5 * time.Millisecond

// nextLeaseStep returns the backoff step after step (0 before the first):
// firstLeaseStep, then twice the last, never more than estimate, the
// denial's RetryAfter (the time until the oldest lease expires, at most
// [ConcurrencyRetryAfter]): by then a lease is free whatever happens.
func nextLeaseStep(step, estimate time.Duration) time.Duration {
	if estimate <= 0 { // a store that reports no estimate
		estimate = ConcurrencyRetryAfter
	}
	return min(max(2*step, firstLeaseStep), estimate)
}

// leaseTry returns how long to sleep when a [Concurrency] limit denied:
// step plus a jitter of up to half of it, but no less than floor, the
// exact wait of the rate limits that also denied, and never past ctx's
// deadline. The jitter is wider than a rate limit's: waiters of one
// client denied together back off in step, and would otherwise all wake
// together, take the places that came back and push the rest a step on.
// The estimate of a lease's return is no earliest admission, so the
// deadline is too close only when floor passes it, or once it has come.
func (l *Limiter) leaseTry(ctx context.Context, floor, step time.Duration) (time.Duration, error) {
	d := max(floor, step+l.jitter(step/2))
	deadline, ok := ctx.Deadline()
	if !ok {
		return d, nil
	}
	switch left := deadline.Sub(l.waitNow()); {
	case left < floor:
		return 0, fmt.Errorf("%w: admission in %s", ErrWaitExceedsDeadline, floor)
	case left <= 0:
		return 0, callerGone(context.DeadlineExceeded)
	default:
		return min(d, left), nil
	}
}

// rateWait returns the longest RetryAfter of the limits of res that are
// not leased and denied: the exact wait before any take can pass them.
func rateWait(res *Result) time.Duration {
	var d time.Duration
	for i := range res.Len() {
		if dec := res.Decision(i); !dec.Allowed && !dec.Limit.Algorithm.leased() {
			d = max(d, dec.RetryAfter)
		}
	}
	return d
}

// costFits returns [ErrCostTooHigh] when cost exceeds the capacity of a
// limit of res (the tier's limits, or the fallback's shares).
func costFits(cost int64, res Result) error {
	for i := range res.Len() {
		d := res.Decision(i)
		if d.Limit.Algorithm.leased() {
			continue // any cost takes one lease
		}
		if c := d.Limit.Capacity(); cost > c {
			return fmt.Errorf("%w: cost %d, limit %q holds %d", ErrCostTooHigh, cost, d.Limit.Name, c)
		}
	}
	return nil
}

// maxJitter bounds the jitter added to a wait of d: a tenth of it, at most
// 1 s. Waiters of one client on several nodes that were denied together
// would otherwise all wake at the same instant, ask the store together and
// be denied together again, round after round; spread over a tenth of the
// wait they ask one after another, and the first to ask takes the quota.
// The price is small: a lone waiter loses 5% of the rate on average (less
// with several waiters, as the earliest one wakes first). The 1 s cap keeps
// a long wait (a daily quota) from growing by minutes: spreading a herd
// over a second is plenty for the store.
func maxJitter(d time.Duration) time.Duration {
	return min(d/10, time.Second)
}

// jitter returns a uniformly random duration in [0, upTo], or the jitter
// function a test set.
func (l *Limiter) jitter(upTo time.Duration) time.Duration {
	if l.waitJitter != nil {
		return l.waitJitter(upTo)
	}
	if upTo <= 0 {
		return 0
	}
	return rand.N(upTo + 1)
}

// waitNow is the time a wait's deadline is measured from: the clock its
// sleeps run on. Context deadlines and timers are wall-clock, so it is
// time.Now, not the store's clock (a test's memstore may run in 2025);
// a test that sleeps on a fake timer measures on the store's clock, which
// its fake timer follows.
func (l *Limiter) waitNow() time.Time {
	if l.waitTimer != nil {
		return l.now()
	}
	return time.Now()
}

// A timerFunc starts a timer of d: its channel fires once d has passed,
// stop releases it early. [time.NewTimer] by default; tests with a fake
// clock inject one.
type timerFunc func(d time.Duration) (fire <-chan time.Time, stop func() bool)

func realTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// sleep waits d, or until ctx is done (its error, wrapped).
func (l *Limiter) sleep(ctx context.Context, d time.Duration) error {
	start := l.waitTimer
	if start == nil {
		start = realTimer
	}
	fire, stop := start(d)
	defer stop()
	select {
	case <-fire:
		return nil
	case <-ctx.Done():
		return callerGone(ctx.Err())
	}
}
