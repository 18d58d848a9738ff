//go:build !race

package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// An admitted request through the net/http middleware allocates three
// times: the RateLimit field's value, the request's context that carries
// its Outcome (httplimit.OutcomeFromContext, and the mark that lets a second
// middleware of the same limiter pass it) and the copy of the request
// that carries that context.
func TestMiddlewareAllocations(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerSecond(1e6).WithName("s")))
	mw, err := httplimit.New(l)
	require.NoError(t, err)
	h := mw.Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if _, ok := httplimit.OutcomeFromContext(r.Context()); !ok {
			t.Fatal("no Outcome in the handler's context")
		}
	}), func(*http.Request) string { return "/" })
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &discardWriter{h: make(http.Header)}
	h.ServeHTTP(w, r)

	allocs := testing.AllocsPerRun(1000, func() {
		clear(w.h)
		h.ServeHTTP(w, r)
	})

	assert.Equal(t, 3.0, allocs)
}
