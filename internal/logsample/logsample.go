// Package logsample is the sampled log of the library's packages (core's
// observers, the httplimit middleware): a log line is a request's worth of
// work a flooding client must not multiply.
package logsample

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A Sampler rate limits a log: at most Burst lines at once, refilled at
// one per Every; it counts the lines it suppressed so the next line can
// say how many ("suppressed" attribute). A nil logger means slog's default
// logger at the time of each line, so slog.SetDefault after construction
// still takes effect.
type Sampler struct {
	log   *slog.Logger
	every time.Duration
	burst float64
	// Now is the sampler's clock (time.Now); tests set it before the
	// first line.
	Now func() time.Time

	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
}

// Defaults of every sampled log of the library: 10 lines at once, then 10
// per second.
const (
	Burst = 10
	Every = 100 * time.Millisecond
)

// New returns a Sampler of logger (nil: slog's default) with the default
// sampling.
func New(logger *slog.Logger) *Sampler {
	return &Sampler{log: logger, every: Every, burst: Burst, tokens: Burst, Now: time.Now}
}

// Emit logs msg with attrs unless the sampler is out of lines.
func (s *Sampler) Emit(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	logger := s.log
	if logger == nil {
		logger = slog.Default()
	}
	if !logger.Enabled(ctx, level) {
		return
	}
	suppressed, ok := s.take()
	if !ok {
		return
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int("suppressed", suppressed))
	}
	logger.LogAttrs(ctx, level, msg, attrs...)
}

// take spends one line from the sampler's own token bucket.
func (s *Sampler) take() (suppressed int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	if !s.last.IsZero() {
		s.tokens = min(s.burst, s.tokens+float64(now.Sub(s.last))/float64(s.every))
	}
	s.last = now
	if s.tokens < 1 {
		s.suppressed++
		return 0, false
	}
	s.tokens--
	suppressed, s.suppressed = s.suppressed, 0
	return suppressed, true
}

// maxLoggedBytes bounds a client-supplied string (a path, an error that
// quotes input) in a log line.
const maxLoggedBytes = 256

// Truncated returns s cut to 256 bytes, marked when it was cut. The cut
// may split a UTF-8 sequence; slog's handlers escape what is invalid.
func Truncated(s string) string {
	if len(s) <= maxLoggedBytes {
		return s
	}
	return s[:maxLoggedBytes] + "...(truncated)"
}

// ErrorText returns the text of err, cut as [Truncated] cuts it; "" for
// nil.
func ErrorText(err error) string {
	if err == nil {
		return ""
	}
	return Truncated(err.Error())
}
