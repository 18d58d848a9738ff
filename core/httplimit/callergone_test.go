package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// Through the middleware, with a middleware in front that sees the client
// hang up: the handler never runs and the answer is a 4xx, so hang-ups do
// not raise the server's 5xx rate.
func TestMiddlewareDoesNotServeAClientThatHungUp(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerMinute(5)))
	mw, err := httplimit.New(l, httplimit.WithKey(func(*http.Request) (string, error) { return "client", nil }))
	require.NoError(t, err)
	var served atomic.Int64
	limited := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }),
		func(*http.Request) string { return "/" })
	hangUp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		cancel()
		limited.ServeHTTP(w, r.WithContext(ctx))
	})

	for range 5 {
		limited.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	require.Equal(t, int64(5), served.Load())
	for range 300 {
		w := httptest.NewRecorder()
		hangUp.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, httplimit.StatusClientClosedRequest, w.Code)
	}
	assert.Equal(t, int64(5), served.Load(), "the handler ran for a client that hung up")
}

func TestErrorStatus(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"client went away", context.Canceled, httplimit.StatusClientClosedRequest},
		{"request deadline passed", context.DeadlineExceeded, http.StatusServiceUnavailable},
		{"key function failed", assert.AnError, http.StatusInternalServerError},
		{"no key in the request", fmt.Errorf("composite part 0: %w", keyfunc.ErrNoKey), http.StatusBadRequest},
		{"malformed login body", fmt.Errorf("form field: %w", keyfunc.ErrMalformed), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, httplimit.ErrorStatus(tt.err))
			assert.Equal(t, tt.want, httplimit.Outcome{Err: tt.err}.Status())
		})
	}
}
