package core

import (
	"fmt"
	"net/http"
	"time"
)

// A MiddlewareOption configures a [Middleware] at construction
// ([NewMiddleware], and every adapter's New).
type MiddlewareOption func(*Middleware) error

// WithKeyFunc sets how the client of a request is identified (default
// [RemoteAddrKey]). Any keyfunc.Func can be passed as is.
//
// With the default, the middleware warns once on slog's default logger when
// requests look proxied (they carry X-Forwarded-For or Forwarded, or nine
// in ten of the first thousand come from a few private addresses): behind a
// proxy, every client would share the proxy's quota.
func WithKeyFunc(fn KeyFunc) MiddlewareOption {
	return func(m *Middleware) error {
		if fn == nil {
			return fmt.Errorf("ratelimit: WithKeyFunc: key func must not be nil")
		}
		m.key, m.hint = fn, nil
		return nil
	}
}

// WithCostFunc sets how much quota a request uses (default 1).
func WithCostFunc(fn CostFunc) MiddlewareOption {
	return func(m *Middleware) error {
		if fn == nil {
			return fmt.Errorf("ratelimit: WithCostFunc: cost func must not be nil")
		}
		m.cost = fn
		return nil
	}
}

// WithCost is shorthand for WithCostFunc with a function that returns n:
// a fixed cost, for an expensive route.
func WithCost(n int64) MiddlewareOption {
	return func(m *Middleware) error {
		if n < 0 {
			return fmt.Errorf("ratelimit: WithCost: cost must not be negative, got %d", n)
		}
		m.cost = func(*http.Request) int64 { return n }
		return nil
	}
}

// WithSkip lets the requests for which fn returns true bypass the limiter.
func WithSkip(fn SkipFunc) MiddlewareOption {
	return func(m *Middleware) error {
		if fn == nil {
			return fmt.Errorf("ratelimit: WithSkip: skip func must not be nil")
		}
		m.skip = fn
		return nil
	}
}

// WithTierFunc sets how the tier of a request is chosen (default: the
// limiter's resolver or default tier).
func WithTierFunc(fn TierFunc) MiddlewareOption {
	return func(m *Middleware) error {
		if fn == nil {
			return fmt.Errorf("ratelimit: WithTierFunc: tier func must not be nil")
		}
		m.tier = fn
		return nil
	}
}

// WithRouteScope gives a client a separate quota on each route: the
// identity becomes [Identity](route, key), where route is the route
// template the adapter reports ("/users/:id"), so /users/1 and /users/2
// share one quota. Requests that match no route share the route "". The
// method is not part of the scope: on a route that accepts any method a
// client could otherwise mint a quota per made-up method.
func WithRouteScope() MiddlewareOption {
	return func(m *Middleware) error {
		m.routeScope = true
		return nil
	}
}

// WithDenyHandler replaces [DefaultDenyHandler]. With echo it also
// replaces the *echo.HTTPError the adapter returns otherwise.
func WithDenyHandler(h DenyHandler) MiddlewareOption {
	return func(m *Middleware) error {
		if h == nil {
			return fmt.Errorf("ratelimit: WithDenyHandler: deny handler must not be nil")
		}
		m.deny, m.ownDeny = h, true
		return nil
	}
}

// WithErrorHandler replaces [DefaultErrorHandler]. With echo it also
// replaces the *echo.HTTPError the adapter returns otherwise.
func WithErrorHandler(h ErrorHandler) MiddlewareOption {
	return func(m *Middleware) error {
		if h == nil {
			return fmt.Errorf("ratelimit: WithErrorHandler: error handler must not be nil")
		}
		m.onError, m.ownError = h, true
		return nil
	}
}

// WithHeaders sets the rate-limit fields written (default [HeadersIETF]);
// combine formats with |, or pass [HeadersOff].
func WithHeaders(f HeaderFormat) MiddlewareOption {
	return func(m *Middleware) error {
		if f&^allHeaderFormats != 0 {
			return fmt.Errorf("ratelimit: WithHeaders: unknown header format %d", uint8(f))
		}
		m.formats = f
		return nil
	}
}

// WithHeaderClock sets the clock of the epoch X-RateLimit-Reset (default
// time.Now). For tests; every other field is a delay.
func WithHeaderClock(now func() time.Time) MiddlewareOption {
	return func(m *Middleware) error {
		if now == nil {
			return fmt.Errorf("ratelimit: WithHeaderClock: clock must not be nil")
		}
		m.now = now
		return nil
	}
}
