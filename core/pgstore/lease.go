package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
)

// Release implements [core.Leaser]: it gives lease back under key, in one
// call of the release function. A lease not held is no error; it leaves a
// tombstone for l.Period, so that a take of it that has not run yet holds
// nothing.
func (s *Store) Release(ctx context.Context, key string, l core.Limit, lease string) error {
	_, err := s.lease(ctx, 0, "release", key, l, lease)
	return err
}

// Renew implements [core.Leaser]: a lease of key still held expires
// l.Period from now, by the database's clock; an expired lease is not
// taken again.
func (s *Store) Renew(ctx context.Context, key string, l core.Limit, lease string) (bool, error) {
	return s.lease(ctx, 1, "renew", key, l, lease)
}

// lease runs the release (op 0) or renew (op 1) function. Neither is sent
// again after a failure: Release's caller (core's lease) retries a
// release on its own, and a renew that failed is reported.
func (s *Store) lease(ctx context.Context, op int, name, key string, l core.Limit, lease string) (bool, error) {
	if l.Algorithm != core.Concurrency || l.Period < time.Microsecond {
		return false, fmt.Errorf("ratelimit: pgstore: %s: limit %q is not a valid Concurrency limit", name, l.EffectiveName())
	}
	var held bool
	err := s.db.QueryRow(ctx, s.leaseSQL[op], key, l.Period.Microseconds(), lease, s.clock()).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("ratelimit: pgstore: %s: %w", name, classify(err))
	}
	return held, nil
}
