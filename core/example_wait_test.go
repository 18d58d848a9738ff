package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// A job worker sends to a partner API that takes 100 calls a second, one
// at a time: instead of handling denials it waits its turn. The first call
// goes at once, each later one about 10 ms after the one before.
func ExampleLimiter_Wait() {
	store, err := memstore.New() // the real clock: this example sleeps
	if err != nil {
		panic(err)
	}
	limiter := core.MustNewLimiter(store, core.WithLimits(core.PerSecond(100).WithBurst(1).WithName("partner")))
	ctx := context.Background()

	start := time.Now()
	for i := 1; i <= 5; i++ {
		if _, err := limiter.Wait(ctx, "partner:acme"); err != nil {
			panic(err) // ctx is done, the store fails closed, or a bug
		}
		fmt.Println("call", i)
	}
	fmt.Println("paced at the rate:", time.Since(start) >= 40*time.Millisecond)
	// Output:
	// call 1
	// call 2
	// call 3
	// call 4
	// call 5
	// paced at the rate: true
}

// A batch larger than a limit can ever hold is refused at once: no wait
// would admit it. Split it.
func ExampleLimiter_WaitN_costTooHigh() {
	limiter := core.MustNewLimiter(frozenStore(), core.WithLimits(core.PerSecond(1_000).WithBurst(50).WithName("partner")))
	_, err := limiter.WaitN(context.Background(), "partner:acme", 60)
	fmt.Println(err)
	fmt.Println(errors.Is(err, core.ErrCostTooHigh))
	// Output:
	// ratelimit: cost exceeds a limit's capacity: waiting never admits it: cost 60, limit "partner" holds 50
	// true
}

// A caller whose deadline comes before the earliest admission gets an
// error at once instead of sleeping into its deadline, as with
// x/time/rate. The tier and the cost go in a Request.
func ExampleLimiter_WaitTake_deadline() {
	limiter := core.MustNewLimiter(frozenStore(), core.WithTier("reports", core.PerMinute(1).WithName("report")))
	req := core.Request{Identity: "tenant:42", Tier: "reports", Cost: 1, Route: "job:report"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()

	res, err := limiter.WaitTake(ctx, req)
	fmt.Println(res.Allowed, err)
	res, err = limiter.WaitTake(ctx, req)
	fmt.Println(res.Allowed, err)
	fmt.Println(errors.Is(err, core.ErrWaitExceedsDeadline), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// true <nil>
	// false ratelimit: wait would exceed the context deadline: context deadline exceeded: admission in 1m0s
	// true true
}

// A partner that enforces "10 per second" refuses the calls past 10 in
// any second. With the default burst (as many as the rate) a waiter spends
// the whole burst at once and then goes on at the rate: 19 calls in its
// first second. WithBurst(1) spaces the calls 100 ms apart, and a sliding
// log never lets more than 10 into any second, bursts included. Here each
// denial moves the store's clock on by its RetryAfter, as Wait sleeps it.
func ExampleLimit_WithBurst() {
	limits := []struct {
		name  string
		limit core.Limit
	}{
		{"default burst", core.PerSecond(10)},
		{"WithBurst(1)", core.PerSecond(10).WithBurst(1)},
		{"sliding log", core.PerSecond(10).WithAlgorithm(core.SlidingLog)},
	}
	for _, l := range limits {
		start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		now := start
		store, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
		if err != nil {
			panic(err)
		}
		limiter := core.MustNewLimiter(store, core.WithLimits(l.limit))
		calls := 0
		for now.Sub(start) < time.Second {
			res, err := limiter.Allow(context.Background(), "partner:acme")
			if err != nil {
				panic(err)
			}
			if res.Allowed {
				calls++
				continue
			}
			now = now.Add(res.Binding().RetryAfter)
		}
		fmt.Printf("%s: %d calls in the first second\n", l.name, calls)
	}
	// Output:
	// default burst: 19 calls in the first second
	// WithBurst(1): 10 calls in the first second
	// sliding log: 10 calls in the first second
}
