package refapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// A Router mounts a [Policy] on one framework's router: [Gin], [Echo],
// [Chi] or [NetHTTP]. export is the work of GET /api/export
// ([BuildExport], or a test's).
type Router = func(p *Policy, export func(context.Context) error) http.Handler

// Frameworks are the names [RouterOf] knows, as examples/production's
// -framework flag takes them.
func Frameworks() []string { return []string{"gin", "echo", "chi", "nethttp"} }

// RouterOf returns the router of the framework named, or an error listing
// the names it knows.
func RouterOf(framework string) (Router, error) {
	switch framework {
	case "gin":
		return Gin, nil
	case "echo":
		return Echo, nil
	case "chi":
		return Chi, nil
	case "nethttp":
		return NetHTTP, nil
	}
	return nil, fmt.Errorf("framework %q: want one of %s", framework, strings.Join(Frameworks(), ", "))
}
