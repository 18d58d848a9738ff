package ratelimitprom

import (
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// InstrumentStoreWithClock is InstrumentStore timed by now, for tests.
func (c *Collector) InstrumentStoreWithClock(s core.Store, now func() time.Time) core.Store {
	ts := c.InstrumentStore(s).(*timedStore)
	ts.now = now
	return ts
}

// StoreResult exports storeResult to the tests.
var StoreResult = storeResult
