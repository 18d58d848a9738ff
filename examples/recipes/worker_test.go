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

// A job pushes 100 records in batches of 20 to a partner API that takes
// 1,000 records a second, 50 at once. The first two batches go at once,
// each later one waits its turn: the export takes 50 ms or more. A batch
// of 60 can never pass and is refused at once.
func ExampleExport() {
	store, err := memstore.New() // the real clock: this example sleeps
	if err != nil {
		panic(err)
	}
	limiter := core.MustNewLimiter(store, core.WithPrefix("rl:jobs"),
		core.WithLimits(core.PerSecond(1_000).WithBurst(50).WithName("partner-api")))
	ctx := context.Background()
	send := func([]string) error { return nil } // the partner API's client

	start := time.Now()
	if err := recipes.Export(ctx, limiter, "partner:acme", make([]string, 100), 20, send); err != nil {
		panic(err)
	}
	fmt.Println("waited for the refill:", time.Since(start) >= 49*time.Millisecond) // 50 ms, less rounding

	err = recipes.Export(ctx, limiter, "partner:acme", make([]string, 60), 60, send) // make batches smaller
	fmt.Println(err)
	fmt.Println(errors.Is(err, core.ErrCostTooHigh))
	// Output:
	// waited for the refill: true
	// recipes: export to partner:acme: ratelimit: cost exceeds a limit's capacity: waiting never admits it: cost 60, limit "partner-api" holds 50
	// true
}

// A job whose deadline comes before its turn gets an error at once,
// instead of sleeping into its deadline.
func ExampleExport_deadline() {
	limiter := core.MustNewLimiter(storeAt(newClock()), core.WithLimits(core.PerMinute(1).WithName("report")))
	send := func([]string) error { return nil }

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(recipes.Export(ctx, limiter, "tenant:42", []string{"report"}, 1, send))
	err := recipes.Export(ctx, limiter, "tenant:42", []string{"report"}, 1, send)
	fmt.Println(err)
	fmt.Println(errors.Is(err, core.ErrWaitExceedsDeadline), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// <nil>
	// recipes: export to tenant:42: ratelimit: wait would exceed the context deadline: context deadline exceeded: admission in 1m0s
	// true true
}
