package adaptertest

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// scenarios is the table every adapter runs. Stores are frozen at now, so
// every value follows from the GCRA formulas of docs/algorithms.md: a limit
// of n per minute has an emission interval of 60/n seconds.
func scenarios() []scenario {
	api1 := []core.Option{core.WithLimits(core.PerMinute(1).WithName("api"))}
	apiPolicy := []policyItem{{"api", 1, 60}}
	return []scenario{
		{
			name:   "allowed requests carry the policy of every limit and the binding limit",
			limits: []core.Option{core.WithLimits(core.PerSecond(2).WithName("second"), core.PerHour(100).WithName("hour"))},
			steps: []step{
				{path: "/hello", client: alice, status: 200, body: "ok",
					policy: []policyItem{{"second", 2, 1}, {"hour", 100, 3600}}, limit: &limitItem{"second", 1, 1}},
			},
		},
		{
			name:   "an exhausted client gets 429, Retry-After and a problem body; others are unaffected",
			limits: []core.Option{core.WithLimits(core.PerMinute(2).WithName("api"))},
			steps: []step{
				{path: "/hello", client: alice, status: 200, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 1, 30}},
				{path: "/hello", client: alice, status: 200, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 0, 30}},
				{path: "/hello", client: alice, status: 429, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 0, 30},
					retry: "30", problem: httplimit.ProblemQuotaExceeded},
				{path: "/hello", client: bob, status: 200, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 1, 30}},
			},
		},
		{
			name: "the tier comes from the API key; an unknown key gets the default tier",
			limits: []core.Option{
				core.WithTier("free", core.PerMinute(1).WithName("free")),
				core.WithTier("pro", core.PerMinute(3).WithName("pro")),
			},
			opts: []httplimit.Option{httplimit.WithTier(tierFromAPIKey)},
			steps: []step{
				{path: "/hello", client: alice, status: 200, policy: []policyItem{{"free", 1, 60}}, limit: &limitItem{"free", 0, 60}},
				{path: "/hello", client: alice, status: 429, policy: []policyItem{{"free", 1, 60}}, limit: &limitItem{"free", 0, 60},
					retry: "60", problem: httplimit.ProblemQuotaExceeded},
				{path: "/hello", client: bob, apiKey: "pro-key", status: 200, policy: []policyItem{{"pro", 3, 60}}, limit: &limitItem{"pro", 2, 20}},
				{path: "/hello", client: bob, apiKey: "pro-key", status: 200, policy: []policyItem{{"pro", 3, 60}}, limit: &limitItem{"pro", 1, 20}},
				{path: "/hello", client: bob, apiKey: "pro-key", status: 200, policy: []policyItem{{"pro", 3, 60}}, limit: &limitItem{"pro", 0, 20}},
				{path: "/hello", client: bob, apiKey: "pro-key", status: 429, policy: []policyItem{{"pro", 3, 60}}, limit: &limitItem{"pro", 0, 20},
					retry: "20", problem: httplimit.ProblemQuotaExceeded},
				{path: "/hello", client: bob, apiKey: "made-up", status: 200, policy: []policyItem{{"free", 1, 60}}, limit: &limitItem{"free", 0, 60}},
			},
		},
		{
			name:   "with route scope each route template has its own quota; raw paths mint none",
			limits: api1,
			opts:   []httplimit.Option{httplimit.WithRouteScope()},
			steps: []step{
				{path: "/users/1", client: alice, status: 200, policy: apiPolicy, limit: &limitItem{"api", 0, 60}},
				{path: "/users/2", client: alice, status: 429, policy: apiPolicy, limit: &limitItem{"api", 0, 60},
					retry: "60", problem: httplimit.ProblemQuotaExceeded},
				{path: "/hello", client: alice, status: 200, policy: apiPolicy, limit: &limitItem{"api", 0, 60}},
				{path: "/hello", client: alice, status: 429, policy: apiPolicy, limit: &limitItem{"api", 0, 60}, retry: "60"},
				{path: "/no/such/route", client: alice, status: 404, policy: apiPolicy, limit: &limitItem{"api", 0, 60}},
				{path: "/another/unknown", client: alice, status: 429, policy: apiPolicy, limit: &limitItem{"api", 0, 60}, retry: "60"},
			},
		},
		{
			name:   "without route scope all routes of a client share its quota",
			limits: api1,
			steps: []step{
				{path: "/users/1", client: alice, status: 200, policy: apiPolicy, limit: &limitItem{"api", 0, 60}},
				{path: "/hello", client: alice, status: 429, policy: apiPolicy, limit: &limitItem{"api", 0, 60}, retry: "60"},
			},
		},
		{
			name:   "a request costs what the cost func says; one that can never fit gets 413",
			limits: []core.Option{core.WithLimits(core.PerMinute(5).WithName("api"))},
			opts:   []httplimit.Option{httplimit.WithCostFunc(costFromHeader)},
			steps: []step{
				{path: "/hello", client: alice, cost: 3, status: 200, policy: []policyItem{{"api", 5, 60}}, limit: &limitItem{"api", 2, 12}},
				{path: "/hello", client: alice, cost: 3, status: 429, policy: []policyItem{{"api", 5, 60}}, limit: &limitItem{"api", 2, 12},
					retry: "12", problem: httplimit.ProblemQuotaExceeded},
				{path: "/hello", client: alice, cost: 6, status: 413, policy: []policyItem{{"api", 5, 60}}, limit: &limitItem{"api", 2, 12},
					problem: httplimit.ProblemQuotaExceeded},
				{path: "/hello", client: alice, cost: 2, status: 200, policy: []policyItem{{"api", 5, 60}}, limit: &limitItem{"api", 0, 12}},
			},
		},
		{
			name:   "a cost of 0 from the cost func is free but needs what a cost of 1 needs; a negative cost is a 400",
			limits: []core.Option{core.WithLimits(core.PerMinute(2).WithName("api"))},
			opts:   []httplimit.Option{httplimit.WithCostFunc(costFromHeader)},
			steps: []step{
				{path: "/hello", client: alice, rawCost: "0", status: 200, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 2, 0}},
				{path: "/hello", client: alice, cost: 2, status: 200, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 0, 30}},
				{path: "/hello", client: alice, rawCost: "0", status: 429, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 0, 30},
					retry: "30", problem: httplimit.ProblemQuotaExceeded},
				{path: "/hello", client: bob, rawCost: "-1", status: 400, problem: "about:blank", noSecrets: true},
				{path: "/hello", client: bob, rawCost: "0", status: 200, policy: []policyItem{{"api", 2, 60}}, limit: &limitItem{"api", 2, 0}},
			},
		},
		{
			name:   "skipped requests bypass the limiter and carry no fields",
			limits: api1,
			opts:   []httplimit.Option{httplimit.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" })},
			steps: []step{
				{path: "/healthz", client: alice, status: 200, body: "ok"},
				{path: "/healthz", client: alice, status: 200, body: "ok"},
				{path: "/hello", client: alice, status: 200, policy: apiPolicy, limit: &limitItem{"api", 0, 60}},
				{path: "/hello", client: alice, status: 429, policy: apiPolicy, limit: &limitItem{"api", 0, 60}, retry: "60"},
				{path: "/healthz", client: alice, status: 200, body: "ok"},
			},
		},
		{
			name:   "a key func error goes to the error handler",
			limits: api1,
			opts:   []httplimit.Option{httplimit.WithKey(failingKey), httplimit.WithErrorHandler(reportKeyError)},
			steps:  []step{{path: "/hello", client: alice, status: 500, body: "handled: true"}},
		},
		{
			name:   "a key func error gets a 500 without internal text by default",
			limits: api1,
			opts:   []httplimit.Option{httplimit.WithKey(failingKey)},
			steps:  []step{{path: "/hello", client: alice, status: 500, problem: "about:blank", noSecrets: true}},
		},
		{
			name:   "a request without what it is keyed by is the client's error: 400, not 500",
			limits: api1,
			opts:   []httplimit.Option{httplimit.WithKey(keyfunc.Must(keyfunc.Header("X-Account")))},
			steps:  []step{{path: "/hello", client: alice, status: 400, problem: "about:blank", noSecrets: true}},
		},
		{
			name:   "a deny handler renders denials",
			limits: api1,
			opts:   []httplimit.Option{httplimit.WithDenyHandler(denyWithName)},
			steps: []step{
				{path: "/hello", client: alice, status: 200, body: "ok", policy: apiPolicy, limit: &limitItem{"api", 0, 60}},
				{path: "/hello", client: alice, status: 429, body: "denied by api", policy: apiPolicy, limit: &limitItem{"api", 0, 60}, retry: "60"},
			},
		},
		{
			name:   "an unavailable store fails open: admitted, policy only",
			limits: api1,
			store:  func(core.Store) core.Store { return failingStore{errUnavailable} },
			steps: []step{
				{path: "/hello", client: alice, status: 200, body: "ok", policy: apiPolicy},
				{path: "/hello", client: alice, status: 200, body: "ok", policy: apiPolicy},
			},
		},
		{
			name:   "an unavailable store failing closed gives 503 and Retry-After",
			limits: append([]core.Option{core.WithFailureMode(core.FailClosed)}, api1...),
			store:  func(core.Store) core.Store { return failingStore{errUnavailable} },
			steps: []step{
				{path: "/hello", client: alice, status: 503, policy: apiPolicy, retry: "1",
					problem: httplimit.ProblemTemporaryReducedCapacity, noSecrets: true},
			},
		},
		{
			name:   "a store bug goes to the error handler, never failing open",
			limits: api1,
			store:  func(core.Store) core.Store { return failingStore{errBug} },
			steps:  []step{{path: "/hello", client: alice, status: 500, problem: "about:blank", noSecrets: true}},
		},
	}
}

func tierFromAPIKey(r *http.Request) string {
	if r.Header.Get("X-API-Key") == "pro-key" {
		return "pro"
	}
	return ""
}

func failingKey(*http.Request) (string, error) { return "", errKey }

func reportKeyError(w http.ResponseWriter, _ *http.Request, err error) {
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, "handled: %t", errors.Is(err, errKey))
}

func denyWithName(w http.ResponseWriter, _ *http.Request, res core.Result) {
	w.WriteHeader(httplimit.DenyStatus(res))
	fmt.Fprintf(w, "denied by %s", res.Binding().Limit.Name)
}
