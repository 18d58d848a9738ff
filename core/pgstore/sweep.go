package pgstore

import (
	"context"
	"fmt"
	"time"
)

// maxSweepRounds bounds the statements of one periodic sweep: at most
// maxSweepRounds × batch rows a period, so that a backlog is worked off
// over several periods instead of in one long burst.
const maxSweepRounds = 100

// Sweep deletes at most limit rows that expired, by the store's clock, and
// returns how many it deleted. A row that expired is already absent to
// every take; Sweep only gives its room back. One call is one statement,
// which reads the table until it finds limit expired rows (a sequential
// scan: expire_at has no index, so that takes stay HOT updates), skipping
// rows a take holds. The periodic sweep ([WithSweep]) calls it.
func (s *Store) Sweep(ctx context.Context, limit int) (int64, error) {
	if limit < 1 {
		return 0, fmt.Errorf("ratelimit: pgstore: sweep: limit must be at least 1, got %d", limit)
	}
	var n int64
	if err := s.db.QueryRow(ctx, s.sweepSQL, s.clock(), limit).Scan(&n); err != nil {
		return 0, fmt.Errorf("ratelimit: pgstore: sweep: %w", classify(err))
	}
	return n, nil
}

// startSweep starts the periodic sweep, unless [WithSweep] turned it off.
func (s *Store) startSweep() {
	if s.sweepEvery == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go s.sweepLoop(ctx)
}

// sweepLoop sweeps every sweepEvery until Close. An error (the database
// unreachable) waits for the next period.
func (s *Store) sweepLoop(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.sweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.sweepOnce(ctx)
		}
	}
}

// sweepOnce deletes expired rows batch by batch until a batch comes back
// short, Close is called, or maxSweepRounds batches ran; each statement
// gets at most one sweep period.
func (s *Store) sweepOnce(ctx context.Context) {
	for range maxSweepRounds {
		sctx, cancel := context.WithTimeout(ctx, s.sweepEvery)
		n, err := s.Sweep(sctx, s.sweepBatch)
		cancel()
		if err != nil || n < int64(s.sweepBatch) {
			return
		}
	}
}

// Close stops the periodic sweep and waits for it. It does not close the
// pool, which belongs to the caller. Close is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.stop != nil {
			s.stop()
			<-s.done
		}
	})
	return nil
}
