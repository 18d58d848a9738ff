package httplimit_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
)

func TestProblemFor(t *testing.T) {
	exhausted := core.NewResult(
		core.Decision{Limit: perSecond, Reason: core.Exhausted, RetryAfter: 2500 * time.Millisecond},
		core.Decision{Limit: daily, Reason: core.Exhausted, RetryAfter: time.Second},
	)
	tooCostly := core.NewResult(core.Decision{Limit: perSecond, Reason: core.CostTooHigh})
	failClosed := core.NewResult(core.Decision{Limit: perSecond, Reason: core.Exhausted, Remaining: 100, RetryAfter: time.Second})
	failClosed.Degraded, failClosed.Err = true, errors.New("dial tcp 10.0.0.7:6379: secret")

	blocked := core.NewResult(
		core.Decision{Limit: perSecond, Reason: core.Blocked, RetryAfter: time.Hour, ResetAfter: time.Hour},
		core.Decision{Limit: daily, Reason: core.Blocked, RetryAfter: time.Hour, ResetAfter: time.Hour},
	)
	lockedOut := core.NewResult(
		core.Decision{Limit: perSecond, Reason: core.LockedOut, RetryAfter: 15 * time.Minute},
		core.Decision{Limit: daily, Allowed: true, Remaining: 10},
	)

	tests := []struct {
		name string
		res  core.Result
		want httplimit.Problem
	}{
		{"blocked: 429 blocked, no policy, the retry delay", blocked, httplimit.Problem{
			Type: httplimit.ProblemBlocked, Title: "Requests of this client are blocked",
			Status: 429, Detail: "Requests of this client are blocked; retry after 3600 seconds.", RetryAfter: 3600,
		}},
		{"locked out: 429 locked-out, the limit that locked", lockedOut, httplimit.Problem{
			Type: httplimit.ProblemLockedOut, Title: "This client is locked out after repeated denials",
			Status: 429, Detail: "Too many denied requests: locked out; retry after 900 seconds.",
			ViolatedPolicies: []string{"per-second"}, RetryAfter: 900,
		}},
		{"exhausted: 429 quota-exceeded with the retry delay", exhausted, httplimit.Problem{
			Type: httplimit.ProblemQuotaExceeded, Title: "Request cannot be satisfied as assigned quota has been exceeded",
			Status: 429, Detail: "Too many requests; retry after 3 seconds.",
			ViolatedPolicies: []string{"per-second", "daily"}, RetryAfter: 3,
		}},
		{"cost too high: 413 quota-exceeded without retry", tooCostly, httplimit.Problem{
			Type: httplimit.ProblemQuotaExceeded, Title: "Request cannot be satisfied as assigned quota has been exceeded",
			Status: 413, Detail: `The request costs more than policy "per-second" grants at once (100); it will never be admitted.`,
			ViolatedPolicies: []string{"per-second"},
		}},
		{"degraded failing closed: 503 temporary-reduced-capacity, no store text", failClosed, httplimit.Problem{
			Type: httplimit.ProblemTemporaryReducedCapacity, Title: "Request cannot be satisfied due to temporary server capacity constraints",
			Status: 503, Detail: "Rate limits cannot be checked right now; retry after 1 second.", RetryAfter: 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want.Status, httplimit.DenyStatus(tt.res))
			assert.Equal(t, tt.want, httplimit.ProblemFor(tt.res))
		})
	}
}

func TestProblemWrite(t *testing.T) {
	w := httptest.NewRecorder()
	w.Header().Set("Retry-After", "3")
	w.Header().Set("Content-Length", "999")

	httplimit.Problem{Type: httplimit.ProblemQuotaExceeded, Title: "t", Status: 429, RetryAfter: 3}.Write(w)

	assert.Equal(t, 429, w.Code)
	assert.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	assert.Equal(t, "3", w.Header().Get("Retry-After"))
	assert.Empty(t, w.Header().Get("Content-Length"))
	assert.JSONEq(t, `{"type":"`+httplimit.ProblemQuotaExceeded+`","title":"t","status":429,"retry_after":3}`, w.Body.String())
}

func TestDefaultErrorHandlerHidesError(t *testing.T) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	old := slog.SetLogLoggerLevel(slog.LevelError + 1) // keep the expected log line out of test output
	t.Cleanup(func() { slog.SetLogLoggerLevel(old) })

	httplimit.DefaultErrorHandler(w, r, errors.New("redis at 10.0.0.7 said NOAUTH"))

	assert.Equal(t, http.StatusInternalServerError, w.Code)
	var p httplimit.Problem
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
	assert.Equal(t, httplimit.Problem{Type: "about:blank", Title: "Internal Server Error", Status: 500}, p)
	assert.NotContains(t, w.Body.String(), "10.0.0.7")
}
