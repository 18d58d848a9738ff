package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/observertest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// scriptSent is a go-redis hook that signals sent (without blocking) when
// a script call, alone or in a pipeline, is about to be sent.
type scriptSent struct{ sent chan struct{} }

func (h *scriptSent) signal(cmds ...redis.Cmder) {
	for _, cmd := range cmds {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			select {
			case h.sent <- struct{}{}:
			default:
			}
			return
		}
	}
}

func (h *scriptSent) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptSent) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.signal(cmd)
		return next(ctx, cmd)
	}
}

func (h *scriptSent) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.signal(cmds...)
		return next(ctx, cmds)
	}
}

// A client that hangs up while its take is on its way to Redis gets its
// context's error: redisstore reports the failed round trip as
// unavailable, and the limiter must not read it as an outage. The review
// saw such a request admitted 1 time in 300; here every hang-up happens
// once the script call has started, on a frozen server that never
// answers, so each one would be failed open and counted toward the
// breaker. (A read blocked on the socket notices the cancel only at the
// limiter's deadline, 400 ms here: go-redis's ContextTimeoutEnabled sets
// socket deadlines from the context's deadline; the caller's context is
// done by then all the same.) None may be admitted or observed as
// degraded, and twice the breaker's Failures leave it closed. One take per
// round trip and batched.
func TestCallerGoneDuringTheRoundTrip(t *testing.T) {
	const failures, hangUps = 3, 6
	tests := []struct {
		name string
		opts []redisstore.Option
	}{
		{"one take per round trip", []redisstore.Option{redisstore.WithoutBatching()}},
		{"batched", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Dedicated(t)
			client := redisstore.NewClient(srv.Options())
			t.Cleanup(func() { _ = client.Close() })
			hook := &scriptSent{sent: make(chan struct{}, 1)}
			client.AddHook(hook)
			store, err := redisstore.New(client, tt.opts...)
			require.NoError(t, err)
			obs := &observertest.Counter{}
			// Only the hang-up may end a take: the deadline is far (the
			// safe client's backstop is 500 ms).
			l := faultLimiterTimeout(t, 400*time.Millisecond, store, srv.Client(t), []core.Limit{core.PerMinute(5)},
				core.WithBreaker(core.BreakerConfig{Failures: failures}), core.WithObserver(obs))
			srv.Freeze(t)
			thawed := false
			thaw := func() {
				if !thawed {
					thawed = true
					srv.Thaw(t)
				}
			}
			t.Cleanup(thaw) // before the TTL check of faultLimiterTimeout

			for i := range hangUps {
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					select {
					case <-hook.sent: // the take is on its way: hang up
					case <-ctx.Done():
					}
					cancel()
				}()
				res, err := l.Allow(ctx, "client")
				cancel()
				require.ErrorIs(t, err, context.Canceled, "hang-up %d", i+1)
				assert.False(t, res.Allowed, "hang-up %d: a caller that gave up was admitted", i+1)
			}
			assert.Zero(t, obs.Decisions(), "decisions observed for callers that gave up")
			assert.Zero(t, obs.Degraded(), "a hang-up is not a store failure")
			assert.Equal(t, core.BreakerClosed, l.BreakerState(), "hang-ups tripped the breaker")

			thaw()
			res, err := l.Allow(context.Background(), "client")
			require.NoError(t, err)
			assert.False(t, res.Degraded, "after the thaw the decision comes from Redis")
		})
	}
}
