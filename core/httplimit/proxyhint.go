package httplimit

import "github.com/ratelimitkit/ratelimit/internal/proxyhint"

// newProxyHint returns the hint of a [Middleware] keyed by [RemoteAddrKey],
// the default: it warns once per cause when requests look proxied (they
// carry X-Forwarded-For or Forwarded, or nine in ten of the first thousand
// come from a few private addresses), the likeliest misconfiguration of a
// rate limiter, where every client shares the proxy's quota.
func newProxyHint() *proxyhint.Hint {
	return proxyhint.New("ratelimit: ", "the limiter",
		"Use a key function that reads the header from trusted proxies (keyfunc.XForwardedFor or "+
			"keyfunc.Forwarded with their prefixes) with httplimit.WithKey.")
}
