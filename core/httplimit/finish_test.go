package httplimit_test

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

// hijackable is a ResponseWriter that can hijack, as a server's can.
type hijackable struct {
	*httptest.ResponseRecorder
	hijacked bool
}

func (h *hijackable) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked = true
	return nil, nil, nil
}

func TestHandlerWrapsTheWriterOnlyWithAfterHandlerWork(t *testing.T) {
	l := newTestLimiter(t, core.WithLimits(core.PerMinute(100)))
	var inner http.ResponseWriter
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { inner = w })

	plain, err := httplimit.New(l)
	require.NoError(t, err)
	outer := httptest.NewRecorder()
	plain.Handler(next, func(*http.Request) string { return "" }).ServeHTTP(outer, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Same(t, outer, inner, "no after-handler work: the handler gets the writer as is")

	statuses := 0
	finishing, err := httplimit.New(l, httplimit.WithFinish(func(*http.Request, httplimit.Outcome, int) { statuses++ }))
	require.NoError(t, err)
	hj := &hijackable{ResponseRecorder: httptest.NewRecorder()}
	next = func(w http.ResponseWriter, _ *http.Request) {
		inner = w
		_, _, err := http.NewResponseController(w).Hijack()
		assert.NoError(t, err)
		_, ok := w.(http.Hijacker)
		assert.True(t, ok, "a direct type assertion works too")
	}
	finishing.Handler(next, func(*http.Request) string { return "" }).ServeHTTP(hj, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.NotSame(t, hj, inner, "wrapped to record the status")
	assert.True(t, hj.hijacked, "Hijack reaches the server's writer")
	assert.Equal(t, 1, statuses)
	assert.Same(t, hj, inner.(interface{ Unwrap() http.ResponseWriter }).Unwrap())
}
