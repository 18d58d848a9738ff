package ratelimitprom

import (
	"context"
	"errors"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// Values of the result label of ratelimit_store_duration_seconds.
const (
	// StoreOK: the store answered.
	StoreOK = "ok"
	// StoreUnavailable: the store could not answer in time or at all (an
	// error wrapping [core.ErrStoreUnavailable], or the call's deadline
	// passed or it was cancelled).
	StoreUnavailable = "unavailable"
	// StoreError: any other error; it means a bug (a script error, a wrong
	// key type) and deserves an alert.
	StoreError = "error"
)

// InstrumentStore returns s timed by c: every Take is observed in
// ratelimit_store_duration_seconds, under its result. Give the returned
// store to [core.NewLimiter]; requests decided without a store call (deny
// cache, open breaker) are not observed.
func (c *Collector) InstrumentStore(s core.Store) core.Store {
	return &timedStore{store: s, c: c, now: time.Now}
}

// timedStore is a [core.Store] that times the Take of another.
type timedStore struct {
	store core.Store
	c     *Collector
	now   func() time.Time
}

// Take implements [core.Store].
func (s *timedStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	start := s.now()
	dst, err := s.store.Take(ctx, dst, keys, limits, cost)
	s.c.latency.WithLabelValues(storeResult(ctx, err)).Observe(s.now().Sub(start).Seconds())
	return dst, err
}

// storeResult classifies the outcome of a store call like the limiter does.
func storeResult(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return StoreOK
	case errors.Is(err, core.ErrStoreUnavailable) || ctx.Err() != nil:
		return StoreUnavailable
	}
	return StoreError
}
