package ratelimitprom

import (
	"context"
	"sync"
)

// OverflowRoute is the route label of requests whose route came after the
// first [WithMaxRoutes] distinct ones. It cannot be a route template, which
// starts with "/" (or a method or host, as in "GET /users/{id}").
const OverflowRoute = "_other"

type routeKey struct{}

// WithRoute returns ctx carrying route, the route template the request
// matched ("/users/:id"; never the raw path, whose values are unbounded).
// The [Collector] reads it in [Collector.Decided] for the route label;
// without it the label is "".
func WithRoute(ctx context.Context, route string) context.Context {
	return context.WithValue(ctx, routeKey{}, route)
}

// RouteFrom returns the route stored in ctx by [WithRoute], or "".
func RouteFrom(ctx context.Context) string {
	route, _ := ctx.Value(routeKey{}).(string)
	return route
}

// routeSet admits at most max distinct routes as label values. Lookups of
// known routes take no lock.
type routeSet struct {
	max   int
	known sync.Map // route -> struct{}
	mu    sync.Mutex
	n     int // guarded by mu
}

// label returns route if it is known or there is room for it, else
// [OverflowRoute]. The empty route is always its own value.
func (s *routeSet) label(route string) string {
	if route == "" {
		return ""
	}
	if _, ok := s.known.Load(route); ok {
		return route
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.known.Load(route); ok {
		return route
	}
	if s.n >= s.max {
		return OverflowRoute
	}
	s.known.Store(route, struct{}{})
	s.n++
	return route
}
