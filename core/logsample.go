package core

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A logSampler rate limits a log: at most burst lines at once, refilled at
// one per every; it counts the lines it suppressed so the next line can
// say how many ("suppressed" attribute). A nil logger means slog's default
// logger at the time of each line, so slog.SetDefault after construction
// still takes effect.
type logSampler struct {
	log   *slog.Logger
	every time.Duration
	burst float64
	now   func() time.Time

	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
}

// Defaults of every sampled log of the package: 10 lines at once, then 10
// per second.
const (
	logBurst = 10
	logEvery = 100 * time.Millisecond
)

func newLogSampler(logger *slog.Logger) *logSampler {
	return &logSampler{log: logger, every: logEvery, burst: logBurst, tokens: logBurst, now: time.Now}
}

// emit logs msg with attrs unless the sampler is out of lines.
func (s *logSampler) emit(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
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
func (s *logSampler) take() (suppressed int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
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

// truncated returns s cut to maxLoggedBytes, marked when it was cut. The
// cut may split a UTF-8 sequence; slog's handlers escape what is invalid.
func truncated(s string) string {
	if len(s) <= maxLoggedBytes {
		return s
	}
	return s[:maxLoggedBytes] + "...(truncated)"
}
