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
		if fn == nil {
			return fmt.Errorf("ratelimit: HTTPKeyFunc: key func must not be nil")
		}
		m.key, m.hint = fn, nil
		return nil
	}
}

// HTTPCostFunc sets how much quota a request uses (default 1).
func HTTPCostFunc(fn CostFunc) HTTPOption {
	return func(m *Middleware) error {
		if fn == nil {
			return fmt.Errorf("ratelimit: HTTPCostFunc: cost func must not be nil")
		}
		m.cost = fn
		return nil
	}
}

// HTTPCost is shorthand for HTTPCostFunc with a function that returns n:
// a fixed cost, for an expensive route.
func HTTPCost(n int64) HTTPOption {
	return func(m *Middleware) error {
		if n < 0 {
			return fmt.Errorf("ratelimit: HTTPCost: cost must not be negative, got %d", n)
		}
		m.cost = func(*http.Request) int64 { return n }
		return nil
	}
}

// HTTPSkip lets the requests for which fn returns true bypass the limiter.
func HTTPSkip(fn SkipFunc) HTTPOption {
	return func(m *Middleware) error {
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

// HTTPDenyHandler replaces [DefaultDenyHandler]. With echo it also
// replaces the *echo.HTTPError the adapter returns otherwise.
func HTTPDenyHandler(h DenyHandler) HTTPOption {
	return func(m *Middleware) error {
		if h == nil {
			return fmt.Errorf("ratelimit: HTTPDenyHandler: deny handler must not be nil")
		}
		m.deny, m.ownDeny = h, true
		return nil
	}
}

// HTTPErrorHandler replaces [DefaultErrorHandler]. With echo it also
// replaces the *echo.HTTPError the adapter returns otherwise.
func HTTPErrorHandler(h ErrorHandler) HTTPOption {
	return func(m *Middleware) error {
		if h == nil {
			return fmt.Errorf("ratelimit: HTTPErrorHandler: error handler must not be nil")
		}
		m.onError, m.ownError = h, true
		return nil
	}
}

// HTTPHeaders sets the rate-limit fields written (default [HeadersIETF]);
// combine formats with |, or pass [HeadersOff].
func HTTPHeaders(f HeaderFormat) HTTPOption {
	return func(m *Middleware) error {
		if f&^allHeaderFormats != 0 {
			return fmt.Errorf("ratelimit: HTTPHeaders: unknown header format %d", uint8(f))
		}
		m.formats = f
		return nil
	}
}
