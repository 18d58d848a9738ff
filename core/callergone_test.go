package core_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/internal/observertest"
)

// A client that is denied, then sends and hangs up at once, must not get
// the handler run: a done context is the caller's error, not a store
// outage to fail open on, and it is neither counted as degraded nor
// allowed to trip the breaker.
func TestCallerGoneIsNotAStoreFailure(t *testing.T) {
	obs := &observertest.Counter{}
	l := newTestLimiter(t, core.WithLimits(core.PerMinute(5).WithName("m")),
		core.WithBreaker(core.BreakerConfig{}), core.WithObserver(obs))
	ctx := context.Background()
	for range 5 {
		res, err := l.Allow(ctx, "client")
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}

	gone, cancel := context.WithCancel(ctx)
	cancel()
	for range 300 {
		res, err := l.Allow(gone, "client")
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, res.Allowed, "a caller that gave up gets no admission")
	}
	assert.Equal(t, int64(5), obs.Decisions(), "no decision was made for the callers that gave up")
	assert.Zero(t, obs.Degraded(), "a hang-up is not a store failure")
	assert.Equal(t, core.BreakerClosed, l.BreakerState())

	res, err := l.Allow(ctx, "client")
	require.NoError(t, err)
	assert.False(t, res.Allowed, "still exhausted")
	assert.False(t, res.Degraded)
}

// hangUpStore is a store that may block (a Redis one), whose every take
// waits until its caller gives up and then fails as core/redisstore fails
// a cancelled round trip: with an error that wraps both
// core.ErrStoreUnavailable and the context's error.
type hangUpStore struct {
	entered chan struct{} // a take is in the store
	calls   atomic.Int64
}

func (s *hangUpStore) Take(ctx context.Context, dst []core.Decision, _ []string, _ []core.Limit, _ int64) ([]core.Decision, error) {
	s.calls.Add(1)
	select {
	case s.entered <- struct{}{}:
	case <-ctx.Done():
	}
	<-ctx.Done()
	return dst, fmt.Errorf("%w: %w", core.ErrStoreUnavailable, ctx.Err())
}

// A client that hangs up while its take is in the store (on Redis, during
// the round trip: the review's race, 1 of 300) gets its context's error,
// past the check a done context meets before the store: the store's
// failure then says nothing about the store, so the request is not
// admitted, not observed as degraded, and four times as many of them as
// the breaker's Failures leave it closed. Through Limiter.Allow and the
// middleware, with and without WithChargeIf (whose check peeks first).
func TestCallerGoneDuringTheStoreCall(t *testing.T) {
	const hangUps = 20 // the breaker opens after 5 failures
	tests := []struct {
		name string
		opts []httplimit.Option // nil: Limiter.Allow, no middleware
	}{
		{"Limiter.Allow", nil},
		{"middleware", []httplimit.Option{}},
		{"middleware with WithChargeIf", []httplimit.Option{httplimit.WithChargeIf(httplimit.FailedRequests)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &hangUpStore{entered: make(chan struct{})}
			obs := &observertest.Counter{}
			// Only the hang-up may end a take: the timeout is far away.
			l, err := core.NewLimiter(store, core.WithLimits(core.PerMinute(5)), core.WithTimeout(time.Minute),
				core.WithBreaker(core.BreakerConfig{Failures: 5}), core.WithObserver(obs))
			require.NoError(t, err)
			var served atomic.Int64
			var h http.Handler
			if tt.opts != nil {
				opts := append([]httplimit.Option{httplimit.WithKey(func(*http.Request) (string, error) { return "client", nil })}, tt.opts...)
				mw, err := httplimit.New(l, opts...)
				require.NoError(t, err)
				h = mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }),
					func(*http.Request) string { return "/" })
			}

			for range hangUps {
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					select {
					case <-store.entered: // the take is in the store: hang up
					case <-ctx.Done():
					}
					cancel()
				}()
				if h == nil {
					res, err := l.Allow(ctx, "client")
					assert.ErrorIs(t, err, context.Canceled)
					assert.False(t, res.Allowed, "a caller that gave up was admitted")
				} else {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
					assert.Equal(t, httplimit.StatusClientClosedRequest, w.Code)
				}
				cancel()
			}
			require.Equal(t, int64(hangUps), store.calls.Load(), "every take reached the store before its caller gave up")
			assert.Zero(t, served.Load(), "the handler ran for a client that hung up")
			assert.Zero(t, obs.Decisions(), "decisions observed for callers that gave up")
			assert.Zero(t, obs.Degraded(), "a hang-up is not a store failure")
			assert.Equal(t, core.BreakerClosed, l.BreakerState(), "hang-ups tripped the breaker")
		})
	}
}
