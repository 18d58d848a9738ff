package recipes

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// Wait blocks until limiter admits req, sleeping each denial's RetryAfter,
// or until ctx is done: for code outside HTTP, a worker whose req names the
// job's key (a tenant, a downstream API) and costs the batch's size. It
// fails at once when the batch can never pass (it costs more than a limit
// holds: split it) and when the wait would outlast ctx's deadline.
func Wait(ctx context.Context, limiter *core.Limiter, req core.Request) error {
	for {
		res, err := limiter.Take(ctx, req)
		if err != nil {
			return err // a bug, or ctx is done
		}
		if res.Allowed {
			return nil // also when the store is down and the limiter fails open
		}
		b := res.Binding()
		if b.Reason == core.CostTooHigh { // no wait admits it
			return fmt.Errorf("recipes: %s: cost %d never fits limit %q", req.Identity, req.Cost, b.Limit.Name)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < b.RetryAfter {
			return fmt.Errorf("recipes: %s: waiting %s would pass the deadline: %w", req.Identity, b.RetryAfter, context.DeadlineExceeded)
		}
		t := time.NewTimer(b.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
