package httplimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/logsample"
)

// Problem types of draft-ietf-httpapi-ratelimit-headers-11, section 5.
const (
	// ProblemQuotaExceeded: the request exceeds one or more quota policies.
	ProblemQuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"
	// ProblemTemporaryReducedCapacity: the server cannot serve the request
	// now because its capacity is temporarily reduced (here: the limiter's
	// store is unavailable and the limiter fails closed).
	ProblemTemporaryReducedCapacity = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
)

// Problem types of the denials the draft does not cover, documented in
// docs/headers.md. Their bodies never hold the operator's reason: a
// client reads a fixed type and Retry-After.
const (
	// ProblemBlocked: an operator blocked the client
	// ([core.Limiter.Block]) until Retry-After has passed.
	ProblemBlocked = "https://github.com/ratelimitkit/ratelimit/blob/main/docs/headers.md#blocked"
	// ProblemLockedOut: a limit's [core.Lockout] locked the client out
	// after repeated denials, until Retry-After has passed.
	ProblemLockedOut = "https://github.com/ratelimitkit/ratelimit/blob/main/docs/headers.md#locked-out"
)

// Titles of the problem types: the draft's as it registers them, then
// ours.
const (
	titleQuotaExceeded   = "Request cannot be satisfied as assigned quota has been exceeded"
	titleReducedCapacity = "Request cannot be satisfied due to temporary server capacity constraints"
	titleBlocked         = "Requests of this client are blocked"
	titleLockedOut       = "This client is locked out after repeated denials"
)

// A Problem is an RFC 9457 problem details object, the JSON body of the
// default responses of a [Middleware]. It never holds internal error text.
type Problem struct {
	// Type is a URI naming the problem type ("about:blank" when none fits).
	Type string `json:"type"`
	// Title is the short summary of the problem type.
	Title string `json:"title"`
	// Status is the HTTP status code of the response.
	Status int `json:"status"`
	// Detail explains this occurrence, for people.
	Detail string `json:"detail,omitempty"`
	// ViolatedPolicies names the limits that denied the request: the
	// draft's extension member of its problem types.
	ViolatedPolicies []string `json:"violated-policies,omitempty"`
	// RetryAfter is the Retry-After delay in seconds, for clients that read
	// the body only. Omitted when no wait helps.
	RetryAfter int64 `json:"retry_after,omitempty"`
}

// DenyStatus returns the status of a response to the denied request res:
//
//   - 503 Service Unavailable when res is degraded and its decisions were
//     made up (the store failed and the limiter fails closed); a denial by
//     the fallback store of [core.FailLocal] is a real one and gets 429;
//   - 413 Content Too Large when the binding limit denied with
//     [core.CostTooHigh]: the request costs more than the limit can ever grant,
//     so it is refused for good and carries no Retry-After (a 429 would
//     invite a retry that can never succeed);
//   - 429 Too Many Requests otherwise, also for a client an operator
//     blocked ([core.Blocked]) or a lockout holds ([core.LockedOut]).
func DenyStatus(res core.Result) int {
	switch {
	case unknownQuota(&res):
		return http.StatusServiceUnavailable
	case res.Binding().Reason == core.CostTooHigh:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusTooManyRequests
}

// ProblemFor returns the problem details of the denied request res: the
// draft's quota-exceeded type for 429 and 413, temporary-reduced-capacity
// for 503 (see [DenyStatus]); [ProblemBlocked] for a client an operator
// blocked and [ProblemLockedOut] for one a lockout holds, both 429.
func ProblemFor(res core.Result) Problem {
	status := DenyStatus(res)
	b := res.Binding()
	retry, _ := retryAfter(&res, b)
	switch {
	case status == http.StatusTooManyRequests && b.Reason == core.Blocked:
		return Problem{Type: ProblemBlocked, Title: titleBlocked, Status: status,
			Detail: fmt.Sprintf("Requests of this client are blocked; retry after %d %s.", retry, plural(retry, "second")), RetryAfter: retry}
	case status == http.StatusTooManyRequests && b.Reason == core.LockedOut:
		return Problem{Type: ProblemLockedOut, Title: titleLockedOut, Status: status, ViolatedPolicies: []string{b.Limit.EffectiveName()},
			Detail: fmt.Sprintf("Too many denied requests: locked out; retry after %d %s.", retry, plural(retry, "second")), RetryAfter: retry}
	}
	switch status {
	case http.StatusServiceUnavailable:
		return Problem{Type: ProblemTemporaryReducedCapacity, Title: titleReducedCapacity, Status: status,
			Detail: fmt.Sprintf("Rate limits cannot be checked right now; retry after %d %s.", retry, plural(retry, "second")), RetryAfter: retry}
	case http.StatusRequestEntityTooLarge:
		return Problem{Type: ProblemQuotaExceeded, Title: titleQuotaExceeded, Status: status, ViolatedPolicies: violated(res),
			Detail: fmt.Sprintf("The request costs more than policy %q grants at once (%d); it will never be admitted.",
				b.Limit.EffectiveName(), b.Limit.Capacity())}
	}
	return Problem{Type: ProblemQuotaExceeded, Title: titleQuotaExceeded, Status: status, ViolatedPolicies: violated(res),
		Detail: fmt.Sprintf("Too many requests; retry after %d %s.", retry, plural(retry, "second")), RetryAfter: retry}
}

// Write sends p as the response: Content-Type application/problem+json,
// status p.Status, then the JSON body. Headers set before (the rate-limit
// fields, Retry-After) are kept.
func (p Problem) Write(w http.ResponseWriter) {
	body, err := json.Marshal(p)
	if err != nil { // unreachable: every field marshals
		body = []byte(`{"type":"about:blank"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}

// DefaultDenyHandler is the [DenyHandler] of a [Middleware] without
// [WithDenyHandler]: it writes [ProblemFor](res). The rate-limit fields and
// Retry-After are already set when it runs.
func DefaultDenyHandler(w http.ResponseWriter, _ *http.Request, res core.Result) {
	ProblemFor(res).Write(w)
}

// DefaultErrorHandler is the [ErrorHandler] of a [Middleware] without
// [WithErrorHandler], modelled on httputil.ReverseProxy's: it answers with
// [ErrorStatus](err) and an about:blank problem that holds no error text,
// and logs err with the request's method and path (both cut to 256 bytes:
// they are the client's) on slog's default logger, at level Error (Info for
// a client's bad input, Debug when the client went away). A Middleware samples these lines (10 at
// once, then 10 per second, the rest counted in "suppressed"), so no client
// can flood the log; called directly, every call logs.
func DefaultErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	logRequestError(logsample.New(nil), r, err)
	writeRequestError(w, err)
}

// logRequestError logs err, an error of a request that could not be
// limited, through s: at Error for a server-side failure, Info for a
// client's bad input, Debug for a client that went away.
func logRequestError(s *logsample.Sampler, r *http.Request, err error) {
	level := slog.LevelError
	switch ErrorStatus(err) {
	case http.StatusBadRequest:
		level = slog.LevelInfo
	case StatusClientClosedRequest:
		level = slog.LevelDebug
	}
	s.Emit(r.Context(), level, "ratelimit: request not limited",
		slog.String("method", logsample.Truncated(r.Method)), slog.String("path", logsample.Truncated(r.URL.Path)),
		slog.String("error", logsample.ErrorText(err)))
}

func writeRequestError(w http.ResponseWriter, err error) {
	status := ErrorStatus(err)
	p := Problem{Type: "about:blank", Title: http.StatusText(status), Status: status}
	switch status {
	case StatusClientClosedRequest:
		w.WriteHeader(status) // nobody reads a body
		return
	case http.StatusBadRequest:
		p.Detail = "The request lacks, or carries malformed, what this API's rate limits are keyed by."
	}
	p.Write(w)
}

// StatusClientClosedRequest (499, nginx's convention) is the status of a
// request whose client went away before it could be limited: a 4xx, so a
// client hanging up cannot raise a server's 5xx rate.
const StatusClientClosedRequest = 499

// ErrorStatus returns the status of the response to a request that could
// not be limited because of err:
//
//   - 400 Bad Request when err was caused by the request itself: it has a
//     method ClientError() bool that returns true, as keyfunc.ErrNoKey and
//     keyfunc.ErrMalformed do (a login body without the account field, a
//     missing API key header);
//   - [StatusClientClosedRequest] when the request's context was cancelled
//     (the client went away);
//   - 503 Service Unavailable when its deadline passed first (the server's
//     own budget for the request ran out);
//   - 500 Internal Server Error otherwise.
func ErrorStatus(err error) int {
	var client interface{ ClientError() bool }
	switch {
	case errors.As(err, &client) && client.ClientError():
		return http.StatusBadRequest
	case errors.Is(err, context.Canceled):
		return StatusClientClosedRequest
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// violated returns the names of the limits that denied res.
func violated(res core.Result) []string {
	var names []string
	for i := range res.Len() {
		if d := res.Decision(i); !d.Allowed {
			names = append(names, d.Limit.EffectiveName())
		}
	}
	return names
}

func plural(n int64, unit string) string {
	if n == 1 {
		return unit
	}
	return unit + "s"
}
