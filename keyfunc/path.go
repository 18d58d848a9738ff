package keyfunc

import "net/http"

// PathValue identifies a request by the path parameter name of its route
// ("source" in "/webhooks/{source}"), e.g. to limit each webhook sender
// separately. It reads r.PathValue, which ServeMux and chi set, and which
// the gin and echo adapters of this module fill from their own parameters.
// The value is the route's own segment, so it is as trustworthy as the
// route: combine it with an authenticated key where clients choose it.
// An empty value is [ErrNoKey].
func PathValue(name string) Func {
	return func(r *http.Request) (string, error) {
		v := r.PathValue(name)
		if v == "" {
			return "", ErrNoKey
		}
		return "path:" + v, nil
	}
}
