package httplimit

import (
	"fmt"
	"net/http"

	"github.com/ratelimitkit/ratelimit/core"
)

// A Option configures a [Middleware] at construction
// ([New], and every adapter's New).
type Option func(*Middleware) error

// WithKey sets how the client of a request is identified (default
// [RemoteAddrKey]). Any keyfunc.Func can be passed as is.
//
// With the default, the middleware warns once on slog's default logger when
// requests look proxied (they carry X-Forwarded-For or Forwarded, or nine
// in ten of the first thousand come from a few private addresses): behind a
// proxy, every client would share the proxy's quota.
func WithKey(fn KeyFunc) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithKey"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: WithKey: key func must not be nil")
		}
		m.key, m.hint = fn, nil
		return nil
	}
}

// WithCostFunc sets how much quota a request uses (default 1).
//
// A cost of 0 from fn is a free request, never a peek: it is admitted only
// when a request of cost 1 would be (an exhausted client is denied, 429
// and Retry-After, as for any request) and charges nothing; like
// [WithChargeIf]'s check, it reads the store, and in the rare case where
// the quota refilled between that read and the denying take, it is
// charged 1. Under a limiter with a [core.Concurrency] limit in a tier, a free
// request is taken at cost 1: the store holds a lease only for a take
// that charges, and a request that runs must hold one. A negative cost
// from fn is the request's fault (a cost read from it): it is refused with
// 400 and a problem document through the [ErrorHandler] (the error wraps
// [core.ErrInvalidCost]). Only [WithCost](0), asked for at construction, makes
// every request a peek, admitted whatever is left and never charged.
func WithCostFunc(fn CostFunc) Option {
	return func(m *Middleware) error {
		if err := m.setCost("WithCostFunc"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: WithCostFunc: cost func must not be nil")
		}
		m.cost = fn
		return nil
	}
}

// WithCost is shorthand for WithCostFunc with a function that returns n:
// a fixed cost, for an expensive route. Giving both is an error.
// WithCost(0) is a peek: every request is admitted, whatever is left,
// charged nothing and holds no lease; the fields show the quota (a route
// that reports it, say).
func WithCost(n int64) Option {
	return func(m *Middleware) error {
		if err := m.setCost("WithCost"); err != nil {
			return err
		}
		if n < 0 {
			return fmt.Errorf("ratelimit: WithCost: cost must not be negative, got %d", n)
		}
		m.given["WithCost(0)"] = n == 0 // charges nothing: see checkCharge
		m.cost = func(*http.Request) int64 { return n }
		return nil
	}
}

// costOf returns the cost of r from the cost func, and whether the request
// is free: see [WithCostFunc] for a cost of 0 and a negative one.
func (m *Middleware) costOf(r *http.Request) (cost int64, free bool, err error) {
	switch cost = m.cost(r); {
	case cost < 0:
		return 0, false, negativeCost(cost)
	case cost > 0 || m.peek:
		return cost, false, nil
	case m.leased:
		return 1, false, nil
	}
	return 1, true, nil
}

// negativeCost is the error of a [CostFunc] that returned a negative
// cost: the request's fault, answered 400 ([ErrorStatus]).
type negativeCost int64

func (e negativeCost) Error() string {
	return fmt.Sprintf("ratelimit: cost func: negative cost %d", int64(e))
}

// Unwrap returns [core.ErrInvalidCost].
func (negativeCost) Unwrap() error { return core.ErrInvalidCost }

// ClientError marks the error as the request's ([ErrorStatus]).
func (negativeCost) ClientError() bool { return true }

// WithSkip lets the requests for which fn returns true bypass the limiter.
func WithSkip(fn SkipFunc) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithSkip"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: WithSkip: skip func must not be nil")
		}
		m.skip = fn
		return nil
	}
}

// WithTier sets how the tier of a request is chosen (default: the
// limiter's resolver or default tier).
func WithTier(fn TierFunc) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithTier"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: WithTier: tier func must not be nil")
		}
		m.tier = fn
		return nil
	}
}

// WithRouteScope gives a client a separate quota on each route: the
// identity becomes [core.Identity](route, key), where route is the route
// template the adapter reports ("/users/:id"), so /users/1 and /users/2
// share one quota. Requests that match no route share the route "". The
// method is not part of the scope: on a route that accepts any method a
// client could otherwise mint a quota per made-up method.
func WithRouteScope() Option {
	return func(m *Middleware) error {
		m.routeScope = true
		return nil
	}
}

// WithDenyHandler replaces [DefaultDenyHandler] (see [Middleware.Custom]).
func WithDenyHandler(h DenyHandler) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithDenyHandler"); err != nil {
			return err
		}
		if h == nil {
			return fmt.Errorf("ratelimit: WithDenyHandler: deny handler must not be nil")
		}
		m.deny, m.customDeny = h, true
		return nil
	}
}

// WithErrorHandler replaces [DefaultErrorHandler] (see [Middleware.Custom]).
func WithErrorHandler(h ErrorHandler) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithErrorHandler"); err != nil {
			return err
		}
		if h == nil {
			return fmt.Errorf("ratelimit: WithErrorHandler: error handler must not be nil")
		}
		m.onError, m.customError = h, true
		return nil
	}
}

// WithHeaders sets the rate-limit fields written (default [HeadersIETF]);
// combine formats with |, or pass [HeadersOff].
func WithHeaders(f HeaderFormat) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithHeaders"); err != nil {
			return err
		}
		if f&^allHeaderFormats != 0 {
			return fmt.Errorf("ratelimit: WithHeaders: unknown header format %d", uint8(f))
		}
		m.formats = f
		return nil
	}
}

// setCost records that the cost option name was given: WithCost and
// WithCostFunc set one thing, so together they contradict each other.
func (m *Middleware) setCost(name string) error {
	switch m.costBy {
	case "":
		m.costBy = name
		return nil
	case name:
		return fmt.Errorf("ratelimit: %s given twice: the second would silently replace the first", name)
	}
	return fmt.Errorf("ratelimit: %s and %s contradict each other: both set the cost", m.costBy, name)
}

// WithTierKey sets the lookup key the limiter's [core.TierResolver] gets for a
// request ([core.Request.TierKey]): typically the raw API key, so that the
// resolver can look up its plan, while the identity (from [WithKey])
// stays hashed in store keys and logs. The resolver's answers are cached by
// a hash of the key, never by the key itself. fn returning "" (the request
// has no key) applies the default tier without asking the resolver; an
// error stops the request, as a [KeyFunc]'s does. It needs a limiter with
// [core.WithTierResolver]; [WithTier], when it names a tier, takes
// precedence.
//
//	mw, err := httplimit.New(limiter,
//		httplimit.WithKey(keyfunc.Must(keyfunc.Header("X-API-Key"))), // hashed identity
//		httplimit.WithTierKey(func(r *http.Request) (string, error) {   // raw lookup key
//			return r.Header.Get("X-API-Key"), nil
//		}))
func WithTierKey(fn KeyFunc) Option {
	return func(m *Middleware) error {
		if err := once(m.given, "WithTierKey"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: WithTierKey: tier key func must not be nil")
		}
		if !m.limiter.HasTierResolver() {
			return fmt.Errorf("ratelimit: WithTierKey needs a limiter with WithTierResolver: nothing would read the key")
		}
		m.tierKey = fn
		return nil
	}
}

// once records that the single-valued option name was given, and fails
// when it already was: the second value would silently replace the first.
func once(given map[string]bool, name string) error {
	if given[name] {
		return fmt.Errorf("ratelimit: %s given twice: the second would silently replace the first", name)
	}
	given[name] = true
	return nil
}
