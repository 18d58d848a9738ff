// Package observertest holds a [core.Observer] for tests.
package observertest

import (
	"context"
	"sync/atomic"

	"github.com/ratelimitkit/ratelimit/core"
)

// Counter counts the decisions a limiter reports, and the degraded ones.
// It is safe for concurrent use.
type Counter struct{ decided, degraded atomic.Int64 }

// Decided implements [core.Observer].
func (c *Counter) Decided(_ context.Context, _ core.Request, res core.Result) {
	c.decided.Add(1)
	if res.Degraded {
		c.degraded.Add(1)
	}
}

// BreakerChanged implements [core.Observer]; it counts nothing.
func (*Counter) BreakerChanged(_, _ core.BreakerState) {}

// Decisions returns how many decisions were reported.
func (c *Counter) Decisions() int64 { return c.decided.Load() }

// Degraded returns how many of them were degraded.
func (c *Counter) Degraded() int64 { return c.degraded.Load() }
