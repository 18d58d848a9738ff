package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/examples/recipes"
)

// A job pushes batches of 20 records to a partner API that takes 1,000
// records a second, 50 at once. The first two batches go at once, each
// later one waits its RetryAfter: 100 records take 50 ms or more.
func ExampleWait() {
	store, err := memstore.New() // the real clock: this example sleeps
	if err != nil {
		panic(err)
	}
	limiter := core.MustNewLimiter(store, core.WithPrefix("rl:jobs"),
		core.WithLimits(core.PerSecond(1_000).WithBurst(50).WithName("partner-api")))
	ctx := context.Background()

	start := time.Now()
	for range 5 {
		batch := make([]string, 20) // the next 20 records
		req := core.Request{Identity: "partner:acme", Cost: int64(len(batch)), Route: "job:export"}
		if err := recipes.Wait(ctx, limiter, req); err != nil {
			panic(err)
		}
		// send(batch)
	}
	fmt.Println("waited for the refill:", time.Since(start) >= 49*time.Millisecond) // 50 ms, less rounding

	err = recipes.Wait(ctx, limiter, core.Request{Identity: "partner:acme", Cost: 60}) // split it
	fmt.Println(err)
	// Output:
	// waited for the refill: true
	// recipes: partner:acme: cost 60 never fits limit "partner-api"
}

// A caller whose deadline comes before the wait ends gets an error at
// once, instead of sleeping into its deadline.
func ExampleWait_deadline() {
	limiter := core.MustNewLimiter(storeAt(newClock()), core.WithLimits(core.PerMinute(1).WithName("report")))
	req := core.Request{Identity: "tenant:42", Cost: 1, Route: "job:report"}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(recipes.Wait(ctx, limiter, req))
	err := recipes.Wait(ctx, limiter, req)
	fmt.Println(err)
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output:
	// <nil>
	// recipes: tenant:42: waiting 1m0s would pass the deadline: context deadline exceeded
	// true
}
