package recipes

import (
	"context"
	"fmt"

	"github.com/ratelimitkit/ratelimit/core"
)

// Export sends records to a partner API in batches of size, each batch
// waiting its turn on limiter ([core.Limiter.WaitTake]): the key is the
// partner account, the cost the batch's size. It stops at the first error:
// ctx is done, a batch can never fit (core.ErrCostTooHigh: make batches
// smaller), the wait would outlast ctx's deadline
// (core.ErrWaitExceedsDeadline), the store fails and the limiter fails
// closed, or send fails.
func Export(ctx context.Context, limiter *core.Limiter, account string, records []string, size int, send func([]string) error) error {
	for len(records) > 0 {
		batch := records[:min(size, len(records))]
		records = records[len(batch):]
		req := core.Request{Identity: account, Cost: int64(len(batch)), Route: "job:export"}
		if _, err := limiter.WaitTake(ctx, req); err != nil {
			return fmt.Errorf("recipes: export to %s: %w", account, err)
		}
		if err := send(batch); err != nil {
			return err
		}
	}
	return nil
}
