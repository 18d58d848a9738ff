package core

import (
	"fmt"
	"net/http"
)

// A HTTPOption configures a [Middleware] at construction
// ([NewMiddleware], and every adapter's New).
type HTTPOption func(*Middleware) error

// HTTPKeyFunc sets how the client of a request is identified (default
// [RemoteAddrKey]). Any keyfunc.Func can be passed as is.
//
// With the default, the middleware warns once on slog's default logger when
// requests look proxied (they carry X-Forwarded-For or Forwarded, or nine
// in ten of the first thousand come from a few private addresses): behind a
// proxy, every client would share the proxy's quota.
func HTTPKeyFunc(fn KeyFunc) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPKeyFunc"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: HTTPKeyFunc: key func must not be nil")
		}
		m.key, m.hint = fn, nil
		return nil
	}
}

// HTTPCostFunc sets how much quota a request uses (default 1).
//
// A cost of 0 from fn is a free request, never a peek: it is admitted only
// when a request of cost 1 would be (an exhausted client is denied, 429
// and Retry-After, as for any request) and charges nothing; like
// [HTTPChargeIf]'s check, it reads the store, and in the rare case where
// the quota refilled between that read and the denying take, it is
// charged 1. Under a limiter with a [Concurrency] limit in a tier, a free
// request is taken at cost 1: the store holds a lease only for a take
// that charges, and a request that runs must hold one. A negative cost
// from fn is the request's fault (a cost read from it): it is refused with
// 400 and a problem document through the [ErrorHandler] (the error wraps
// [ErrInvalidCost]). Only [HTTPCost](0), asked for at construction, makes
// every request a peek, admitted whatever is left and never charged.
func HTTPCostFunc(fn CostFunc) HTTPOption {
	return func(m *Middleware) error {
		if err := m.setCost("HTTPCostFunc"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: HTTPCostFunc: cost func must not be nil")
		}
		m.cost = fn
		return nil
	}
}

// HTTPCost is shorthand for HTTPCostFunc with a function that returns n:
// a fixed cost, for an expensive route. Giving both is an error.
// HTTPCost(0) is a peek: every request is admitted, whatever is left,
// charged nothing and holds no lease; the fields show the quota (a route
// that reports it, say).
func HTTPCost(n int64) HTTPOption {
	return func(m *Middleware) error {
		if err := m.setCost("HTTPCost"); err != nil {
			return err
		}
		if n < 0 {
			return fmt.Errorf("ratelimit: HTTPCost: cost must not be negative, got %d", n)
		}
		m.given["HTTPCost(0)"] = n == 0 // charges nothing: see checkCharge
		m.cost = func(*http.Request) int64 { return n }
		return nil
	}
}

// costOf returns the cost of r from the cost func, and whether the request
// is free: see [HTTPCostFunc] for a cost of 0 and a negative one.
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

// Unwrap returns [ErrInvalidCost].
func (negativeCost) Unwrap() error { return ErrInvalidCost }

// ClientError marks the error as the request's ([ErrorStatus]).
func (negativeCost) ClientError() bool { return true }

// HTTPSkip lets the requests for which fn returns true bypass the limiter.
func HTTPSkip(fn SkipFunc) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPSkip"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: HTTPSkip: skip func must not be nil")
		}
		m.skip = fn
		return nil
	}
}

// HTTPTierFunc sets how the tier of a request is chosen (default: the
// limiter's resolver or default tier).
func HTTPTierFunc(fn TierFunc) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPTierFunc"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: HTTPTierFunc: tier func must not be nil")
		}
		m.tier = fn
		return nil
	}
}

// HTTPRouteScope gives a client a separate quota on each route: the
// identity becomes [Identity](route, key), where route is the route
// template the adapter reports ("/users/:id"), so /users/1 and /users/2
// share one quota. Requests that match no route share the route "". The
// method is not part of the scope: on a route that accepts any method a
// client could otherwise mint a quota per made-up method.
func HTTPRouteScope() HTTPOption {
	return func(m *Middleware) error {
		m.routeScope = true
		return nil
	}
}

// HTTPDenyHandler replaces [DefaultDenyHandler] (see [Middleware.Custom]).
func HTTPDenyHandler(h DenyHandler) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPDenyHandler"); err != nil {
			return err
		}
		if h == nil {
			return fmt.Errorf("ratelimit: HTTPDenyHandler: deny handler must not be nil")
		}
		m.deny, m.customDeny = h, true
		return nil
	}
}

// HTTPErrorHandler replaces [DefaultErrorHandler] (see [Middleware.Custom]).
func HTTPErrorHandler(h ErrorHandler) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPErrorHandler"); err != nil {
			return err
		}
		if h == nil {
			return fmt.Errorf("ratelimit: HTTPErrorHandler: error handler must not be nil")
		}
		m.onError, m.customError = h, true
		return nil
	}
}

// HTTPHeaders sets the rate-limit fields written (default [HeadersIETF]);
// combine formats with |, or pass [HeadersOff].
func HTTPHeaders(f HeaderFormat) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPHeaders"); err != nil {
			return err
		}
		if f&^allHeaderFormats != 0 {
			return fmt.Errorf("ratelimit: HTTPHeaders: unknown header format %d", uint8(f))
		}
		m.formats = f
		return nil
	}
}

// setCost records that the cost option name was given: HTTPCost and
// HTTPCostFunc set one thing, so together they contradict each other.
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

// HTTPTierKey sets the lookup key the limiter's [TierResolver] gets for a
// request ([Request.TierKey]): typically the raw API key, so that the
// resolver can look up its plan, while the identity (from [HTTPKeyFunc])
// stays hashed in store keys and logs. The resolver's answers are cached by
// a hash of the key, never by the key itself. fn returning "" (the request
// has no key) applies the default tier without asking the resolver; an
// error stops the request, as a [KeyFunc]'s does. It needs a limiter with
// [WithTierResolver]; [HTTPTierFunc], when it names a tier, takes
// precedence.
//
//	mw, err := core.NewMiddleware(limiter,
//		core.HTTPKeyFunc(keyfunc.Must(keyfunc.Header("X-API-Key"))), // hashed identity
//		core.HTTPTierKey(func(r *http.Request) (string, error) {   // raw lookup key
//			return r.Header.Get("X-API-Key"), nil
//		}))
func HTTPTierKey(fn KeyFunc) HTTPOption {
	return func(m *Middleware) error {
		if err := once(m.given, "HTTPTierKey"); err != nil {
			return err
		}
		if fn == nil {
			return fmt.Errorf("ratelimit: HTTPTierKey: tier key func must not be nil")
		}
		if m.limiter.tiers == nil {
			return fmt.Errorf("ratelimit: HTTPTierKey needs a limiter with WithTierResolver: nothing would read the key")
		}
		m.tierKey = fn
		return nil
	}
}
