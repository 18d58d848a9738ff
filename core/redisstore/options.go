package redisstore

import (
	"log/slog"
	"time"
)

// An Option configures a [Store] in [New].
type Option func(*config)

type config struct {
	now    func() time.Time
	appNow func() time.Time // [WithAppClock]
	logger *slog.Logger

	batchOn    bool // [WithBatching]: batching asked for, so New says when it cannot apply
	batchOff   bool // [WithoutBatching]
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

// WithAppClock sets the app's clock, from which the store computes the
// calendar boundaries it sends with a take of a [core.CalendarWindow]
// limit (docs/algorithms.md, "Calendar windows"); Redis's clock still
// picks the window. The default is the clock of [WithClock] when it is
// set, else time.Now. It exists for tests that put the app's clock off
// the server's; production has no reason to set it.
func WithAppClock(now func() time.Time) Option {
	return func(c *config) { c.appNow = now }
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

// appClock returns the clock of the calendar boundaries: [WithAppClock]'s,
// else [WithClock]'s, else time.Now.
func appClock(c config) func() time.Time {
	switch {
	case c.appNow != nil:
		return c.appNow
	case c.now != nil:
		return c.now
	}
	return time.Now
}
