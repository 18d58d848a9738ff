package ratelimitprom

import (
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// InstrumentStoreWithClock is InstrumentStore timed by now, for tests.
func (c *Collector) InstrumentStoreWithClock(s core.Store, now func() time.Time) core.Store {
	return c.instrumentStore(s, now)
}

// StoreResult exports storeResult to the tests.
var StoreResult = storeResult
