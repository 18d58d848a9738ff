package recipes

import (
	"errors"
	"log/slog"
	"net/http"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/keyfunc"
)

// LoginGuard returns the middleware of POST /login: 5 failed attempts a
// minute per account and address, and, whatever the account, 30 failures at
// once then one every 6 s per address; a successful login (a status below
// 400) is never counted. ip is the client address (see [ClientIP]). While
// store is down, each of the nodes app nodes decides on its own with
// fallback, a memstore, at the limits divided by nodes.
func LoginGuard(store, fallback core.Store, ip keyfunc.Func, nodes int) (func(http.Handler) http.Handler, error) {
	account, err := keyfunc.FormValue("account") // hashed; the handler still reads the whole body
	if err != nil {
		return nil, err
	}
	// Not FailOpen: a guard that fails open is a bypass while Redis is down,
	// or while an attacker keeps it busy. Not FailClosed: that locks every
	// user out. FailLocal keeps guarding, per node.
	local := core.WithFallback(fallback, nodes)
	violations := core.WithObserver(core.NewSlogObserver(slog.Default())) // clients logged hashed

	// Sliding log: at most 5 in any moving minute (a fixed window lets 10
	// through across its boundary, GCRA with burst 5 lets 9), for a log of
	// at most 5 entries per key.
	perAccount, err1 := core.NewLimiter(store, core.WithPrefix("rl:login"), local, violations,
		core.WithLimits(core.PerMinute(5).WithName("login").WithAlgorithm(core.SlidingLog)))
	// GCRA: one small key at any rate, and a burst for the many users one
	// NAT address stands for; it stops one address trying many accounts.
	perAddress, err2 := core.NewLimiter(store, core.WithPrefix("rl:login-ip"), local, violations,
		core.WithLimits(core.PerHour(600).WithBurst(30).WithName("login-ip")))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}

	// Only failures count: checked before the handler, charged after it
	// when the response is 400 or above (the 401 of a wrong password).
	failed := httplimit.WithChargeIf(httplimit.FailedRequests)
	byAccount := ratelimithttp.New(perAccount, httplimit.WithKey(keyfunc.Composite(account, ip)), failed)
	byAddress := ratelimithttp.New(perAddress, httplimit.WithKey(ip), failed)
	// The address wraps the account guard: an attempt the account limit
	// denies (429) is a failure the address counts too.
	return func(next http.Handler) http.Handler { return byAddress(byAccount(next)) }, nil
}
