package ratelimitprom

import (
	"context"
	"errors"
	"fmt"
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
// cache, open breaker) are not observed. The returned store has exactly
// the [core.Capabilities] of s, so the limiter treats it as it would treat
// s: no timeout for a memory store, one breaker per Redis Cluster master,
// a test clock given to s still drives the limiter, a timeout s cannot
// keep is still refused, and a Concurrency limit is refused over a store
// that cannot hold leases. Over one that can, its leases go through the
// returned store (TakeLease is timed like Take).
func (c *Collector) InstrumentStore(s core.Store) core.Store {
	return c.instrumentStore(s, time.Now)
}

// instrumentStore is [Collector.InstrumentStore] timed by now.
func (c *Collector) instrumentStore(s core.Store, now func() time.Time) core.Store {
	ts := &timedStore{store: s, c: c, now: now}
	if cs, ok := s.(core.ControlStore); ok {
		return &timedControlStore{timedStore: ts, controls: cs}
	}
	return ts
}

// timedControlStore is a timedStore over a [core.ControlStore]: it keeps
// the controls (overrides, blocks, exemptions) of the store it times
// reachable, untimed, so that a limiter over it still has them.
type timedControlStore struct {
	*timedStore
	controls core.ControlStore
}

// SetControl implements [core.ControlStore].
func (s *timedControlStore) SetControl(ctx context.Context, space, id string, value []byte, expires time.Time) (uint64, error) {
	return s.controls.SetControl(ctx, space, id, value, expires)
}

// TouchControl implements [core.ControlStore].
func (s *timedControlStore) TouchControl(ctx context.Context, space, id string) (uint64, error) {
	return s.controls.TouchControl(ctx, space, id)
}

// Controls implements [core.ControlStore].
func (s *timedControlStore) Controls(ctx context.Context, space string, since uint64) (core.ControlChanges, error) {
	return s.controls.Controls(ctx, space, since)
}

// DeleteKeys implements [core.ControlStore].
func (s *timedControlStore) DeleteKeys(ctx context.Context, keys []string) (int64, error) {
	return s.controls.DeleteKeys(ctx, keys)
}

// timedStore is a [core.Store] that times the Take of another.
type timedStore struct {
	store core.Store
	c     *Collector
	now   func() time.Time
}

// Capabilities implements [core.Capable]: those of the timed store.
func (s *timedStore) Capabilities() core.Capabilities {
	return core.CapabilitiesOf(s.store)
}

// Take implements [core.Store].
func (s *timedStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	start := s.now()
	dst, err := s.store.Take(ctx, dst, keys, limits, cost)
	s.c.latency.WithLabelValues(storeResult(ctx, err)).Observe(s.now().Sub(start).Seconds())
	return dst, err
}

// TakeLease implements [core.Leaser].
func (s *timedStore) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	ls, err := s.leaser()
	if err != nil {
		return dst, err
	}
	start := s.now()
	dst, err = ls.TakeLease(ctx, dst, keys, limits, cost, lease)
	s.c.latency.WithLabelValues(storeResult(ctx, err)).Observe(s.now().Sub(start).Seconds())
	return dst, err
}

// Release implements [core.Leaser].
func (s *timedStore) Release(ctx context.Context, key string, l core.Limit, lease string) error {
	ls, err := s.leaser()
	if err != nil {
		return err
	}
	return ls.Release(ctx, key, l, lease)
}

// Renew implements [core.Leaser].
func (s *timedStore) Renew(ctx context.Context, key string, l core.Limit, lease string) (bool, error) {
	ls, err := s.leaser()
	if err != nil {
		return false, err
	}
	return ls.Renew(ctx, key, l, lease)
}

func (s *timedStore) leaser() (core.Leaser, error) {
	ls, ok := s.store.(core.Leaser)
	if !ok {
		return nil, fmt.Errorf("ratelimit: prometheus: store %T does not implement core.Leaser", s.store)
	}
	return ls, nil
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
