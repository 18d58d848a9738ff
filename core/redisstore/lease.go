package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

var _ core.Leaser = (*Store)(nil)

// TakeLease implements [core.Leaser]: [Store.Take] with the lease id as the
// script's last argument, so that an admitted take of cost > 0 holds lease
// in the sorted set of every Concurrency limit, scored by its expiry by the
// Redis clock (scripts/concurrency.lua). Errors are those of Take.
func (s *Store) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	if lease == "" {
		return dst, errors.New("ratelimit: redis take: empty lease id")
	}
	return s.take(ctx, dst, keys, limits, cost, lease)
}

// Release implements [core.Leaser]: one call of scripts/lease.lua (a
// ZREM) on key's node. A lease not held is no error; it leaves a tombstone
// for l.Period in the key, so that a take of it still in flight (sent,
// but not run yet: its caller gave up waiting) holds nothing when it runs.
// Errors are wrapped as "ratelimit: redis release: ..." and, like Take's,
// wrap [core.ErrStoreUnavailable] when Redis cannot answer now.
func (s *Store) Release(ctx context.Context, key string, l core.Limit, lease string) error {
	if l.Algorithm != core.Concurrency || l.Period < time.Microsecond {
		return fmt.Errorf("ratelimit: redis release: limit %q is not a valid Concurrency limit", l.EffectiveName())
	}
	_, err := s.leaseCall(ctx, key, lease, -l.Period.Microseconds())
	if err != nil {
		return fmt.Errorf("ratelimit: redis release: %w", err)
	}
	return nil
}

// Renew implements [core.Leaser]: one call of scripts/lease.lua that
// pushes a live lease's expiry to l.Period from now by the Redis clock
// (the test clock of [WithClock]) and the key's TTL with it.
func (s *Store) Renew(ctx context.Context, key string, l core.Limit, lease string) (bool, error) {
	if l.Algorithm != core.Concurrency || l.Period < time.Microsecond {
		return false, fmt.Errorf("ratelimit: redis renew: limit %q is not a valid Concurrency limit", l.EffectiveName())
	}
	held, err := s.leaseCall(ctx, key, lease, l.Period.Microseconds())
	if err != nil {
		return false, fmt.Errorf("ratelimit: redis renew: %w", err)
	}
	return held, nil
}

// leaseCall runs lease.lua: ttl > 0 (µs) renews, -ttl releases.
func (s *Store) leaseCall(ctx context.Context, key, lease string, ttl int64) (bool, error) {
	var now any = ""
	if s.now != nil {
		now = keylayout.EpochMicros(s.now())
	}
	p := &s.progs.lease
	a := append(p.evalSha([]string{key}, 3), now, lease, ttl)
	reply, err := s.run(ctx, p, newCall(ctx, a))
	if err != nil {
		return false, classify(err)
	}
	if len(reply) != 1 {
		return false, fmt.Errorf("lease script replied %d values, want 1", len(reply))
	}
	return reply[0] == 1, nil
}
