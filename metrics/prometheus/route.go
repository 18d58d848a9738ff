package ratelimitprom

import "sync"

// OverflowRoute is the route label of requests whose route came after the
// first [WithMaxRoutes] distinct ones. It cannot be a route template, which
// starts with "/" (or a method or host, as in "GET /users/{id}").
const OverflowRoute = "_other"

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
