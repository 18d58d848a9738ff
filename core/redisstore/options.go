package redisstore

import (
	"log/slog"
	"time"
)

// An Option configures a [Store] in [New].
type Option func(*config)

type config struct {
	now    func() time.Time
	logger *slog.Logger

	batching   bool // [WithBatching]
	batchAlone bool // tests: a lone take goes as a pipeline too
}

// WithClock makes the store send now() with every take instead of letting
// Redis read its own clock (TIME). It exists for tests, which need
// deterministic time (core/storetest); never use it in production, where
// app nodes with different clocks would disagree. A [core.Limiter] over the
// store times its deny cache, tier cache and breaker with it too
// ([Store.Clock]).
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// WithLogger sets where [New] logs the problems [CheckClient] finds in the
// client (default slog.Default()). A nil logger logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		c.logger = l
	}
}
