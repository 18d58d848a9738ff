package redisstore

import "time"

// An Option configures a [Store] in [New].
type Option func(*Store)

// WithClock makes the store send now() with every take instead of letting
// Redis read its own clock (TIME). It exists for tests, which need
// deterministic time (core/storetest); never use it in production, where
// app nodes with different clocks would disagree.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}
