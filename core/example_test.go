package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// frozenStore is a memory store whose clock never moves, so the examples'
// output is the same on every run.
func frozenStore() core.Store {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := memstore.New(memstore.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	return s
}

// Two limits per client, taken together: 10 per second with bursts of 3,
// and 5 per day. Four requests at one instant: the burst admits three
// (each charged to both limits), and the fourth is denied by "burst", the
// binding limit, which frees a slot in 100 ms; the daily quota is not
// charged for the denied request (a denial takes nothing).
func ExampleLimiter_Allow() {
	limiter, err := core.NewLimiter(frozenStore(), core.WithLimits(
		core.PerSecond(10).WithBurst(3).WithName("burst"),
		core.PerDay(5).WithName("daily").WithAlgorithm(core.FixedWindow),
	))
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 4; i++ {
		res, _ := limiter.Allow(context.Background(), "203.0.113.7")
		b := res.Binding()
		fmt.Printf("request %d: allowed=%t binding=%s remaining=%d retry_after=%s\n",
			i, res.Allowed, b.Limit.Name, b.Remaining, b.RetryAfter)
	}
	// Output:
	// request 1: allowed=true binding=burst remaining=2 retry_after=0s
	// request 2: allowed=true binding=burst remaining=1 retry_after=0s
	// request 3: allowed=true binding=burst remaining=0 retry_after=0s
	// request 4: allowed=false binding=burst remaining=0 retry_after=100ms
}

// Invalid configuration fails at construction, naming the field.
func ExampleNewLimiter_invalid() {
	_, err := core.NewLimiter(frozenStore(), core.WithLimits(core.PerMinute(0)))
	fmt.Println(err)
	// Output:
	// ratelimit: tier "default": limit "0-per-1m": Rate must be positive, got 0
}

// Tiers: the recipe's free / pro / enterprise token buckets; the tier of a
// request is named by the caller (or a TierResolver).
func ExampleLimiter_Take_tiers() {
	limiter := core.MustNewLimiter(frozenStore(), core.WithTiers(core.RecipeTiers()...))
	for _, tier := range []string{"free", "pro", "enterprise", "gold"} {
		res, _ := limiter.Take(context.Background(), core.Request{Identity: "key-of-" + tier, Tier: tier, Cost: 1})
		fmt.Printf("%s: tier=%s remaining=%d err=%v\n", tier, res.Tier, res.Binding().Remaining, res.TierErr)
	}
	// Output:
	// free: tier=free remaining=99 err=<nil>
	// pro: tier=pro remaining=999 err=<nil>
	// enterprise: tier=enterprise remaining=9999 err=<nil>
	// gold: tier=free remaining=99 err=ratelimit: unknown tier "gold"
}

// Fractional rates are whole requests per period.
func ExampleEvery() {
	fmt.Println(core.Every(3*time.Minute).Interval(), core.Every(2*time.Second).Interval(), core.PerSecond(10).WithBurst(100).Capacity())
	// Output:
	// 3m0s 2s 100
}

// The package overview's first steps, on the memory store: a limiter of
// 10 per second with bursts of 20, asked for one client.
func Example() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	limiter, err := core.NewLimiter(store, core.WithLimits(core.PerSecond(10).WithBurst(20)))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	admitted := 0
	for range 25 {
		res, err := limiter.Allow(ctx, "203.0.113.7")
		if err != nil {
			panic(err)
		}
		if res.Allowed {
			admitted++
			continue
		}
		b := res.Binding()
		fmt.Printf("refused by %s; retry within 100ms: %t\n", b.Limit.Name, b.RetryAfter <= 100*time.Millisecond)
		break
	}
	fmt.Println("admitted:", admitted)
	// Output:
	// refused by 10-per-1s; retry within 100ms: true
	// admitted: 20
}

// A concurrency limit beside a rate limit: at most 2 requests of a client
// in flight. Each admitted request holds a lease, given back with Release
// when it ends (an HTTP middleware does it after the handler returns); a
// third request while two are in flight is denied, with a RetryAfter
// estimate, and takes nothing from the rate limit.
func ExampleLimiter_Release() {
	limiter := core.MustNewLimiter(frozenStore(), core.WithLimits(core.PerMinute(100), core.Concurrent(2)))
	ctx := context.Background()
	var running []core.Result
	for i := 1; i <= 3; i++ {
		res, _ := limiter.Allow(ctx, "203.0.113.7")
		b := res.Binding()
		fmt.Printf("request %d: allowed=%t lease=%t binding=%s in_flight=%d retry_after=%s\n",
			i, res.Allowed, res.Lease != nil, b.Limit.Name, res.Decision(1).InFlight(), b.RetryAfter)
		if res.Allowed {
			running = append(running, res)
		}
	}
	_ = limiter.Release(ctx, running[0]) // the first request ended
	res, _ := limiter.Allow(ctx, "203.0.113.7")
	fmt.Printf("after a release: allowed=%t in_flight=%d\n", res.Allowed, res.Decision(1).InFlight())
	// Output:
	// request 1: allowed=true lease=true binding=2-in-flight in_flight=1 retry_after=0s
	// request 2: allowed=true lease=true binding=2-in-flight in_flight=2 retry_after=0s
	// request 3: allowed=false lease=false binding=2-in-flight in_flight=2 retry_after=1s
	// after a release: allowed=true in_flight=2
}
