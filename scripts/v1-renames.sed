# v1-renames.sed: the v1 API renames (CHANGELOG.md, "v1 API").
# Apply to the *.go and *.md files of a program that uses ratelimit:
#   git ls-files "*.go" "*.md" | xargs sed -i -E -f scripts/v1-renames.sed
# (GNU sed; \b is a word boundary, so WithCost does not touch WithCostFunc.)
# Each name is renamed when written core.Name or unqualified (core's own code
# and [Name] doc links, prose); Name qualified by any other package (bench's
# httprate.WithErrorHandler) is protected first and left alone.
#
# Middleware options: their own type and the HTTP prefix.
s/([A-Za-z0-9_])\.MiddlewareOptions\b/\1.__KEEP__MiddlewareOptions/g
s/\bcore\.__KEEP__MiddlewareOptions\b/core.HTTPOptions/g
s/\bMiddlewareOptions\b/HTTPOptions/g
s/([A-Za-z0-9_])\.MiddlewareOption\b/\1.__KEEP__MiddlewareOption/g
s/\bcore\.__KEEP__MiddlewareOption\b/core.HTTPOption/g
s/\bMiddlewareOption\b/HTTPOption/g
s/([A-Za-z0-9_])\.WithKeyFunc\b/\1.__KEEP__WithKeyFunc/g
s/\bcore\.__KEEP__WithKeyFunc\b/core.HTTPKeyFunc/g
s/\bWithKeyFunc\b/HTTPKeyFunc/g
s/([A-Za-z0-9_])\.WithTierFunc\b/\1.__KEEP__WithTierFunc/g
s/\bcore\.__KEEP__WithTierFunc\b/core.HTTPTierFunc/g
s/\bWithTierFunc\b/HTTPTierFunc/g
s/([A-Za-z0-9_])\.WithCostFunc\b/\1.__KEEP__WithCostFunc/g
s/\bcore\.__KEEP__WithCostFunc\b/core.HTTPCostFunc/g
s/\bWithCostFunc\b/HTTPCostFunc/g
s/([A-Za-z0-9_])\.WithCost\b/\1.__KEEP__WithCost/g
s/\bcore\.__KEEP__WithCost\b/core.HTTPCost/g
s/\bWithCost\b/HTTPCost/g
s/([A-Za-z0-9_])\.WithSkip\b/\1.__KEEP__WithSkip/g
s/\bcore\.__KEEP__WithSkip\b/core.HTTPSkip/g
s/\bWithSkip\b/HTTPSkip/g
s/([A-Za-z0-9_])\.WithHeaders\b/\1.__KEEP__WithHeaders/g
s/\bcore\.__KEEP__WithHeaders\b/core.HTTPHeaders/g
s/\bWithHeaders\b/HTTPHeaders/g
s/([A-Za-z0-9_])\.WithDenyHandler\b/\1.__KEEP__WithDenyHandler/g
s/\bcore\.__KEEP__WithDenyHandler\b/core.HTTPDenyHandler/g
s/\bWithDenyHandler\b/HTTPDenyHandler/g
s/([A-Za-z0-9_])\.WithErrorHandler\b/\1.__KEEP__WithErrorHandler/g
s/\bcore\.__KEEP__WithErrorHandler\b/core.HTTPErrorHandler/g
s/\bWithErrorHandler\b/HTTPErrorHandler/g
s/([A-Za-z0-9_])\.WithRouteScope\b/\1.__KEEP__WithRouteScope/g
s/\bcore\.__KEEP__WithRouteScope\b/core.HTTPRouteScope/g
s/\bWithRouteScope\b/HTTPRouteScope/g
s/__KEEP__//g
#
# Echo's rendering question, now a neutral accessor of core.Middleware.
s/\bMiddleware\.Renders\b/Middleware.Custom/g
s/\bmw\.Renders\(/mw.Custom(/g
s/\bownDeny\b/customDeny/g
s/\bownError\b/customError/g
#
# Removed, no mechanical replacement (fix by hand; the compiler finds them):
#   core.WithClock(now)         -> give the store the clock: memstore.WithClock /
#                                  redisstore.WithClock; the limiter follows a store
#                                  that implements core.Clocked (Clock() func() time.Time).
#   core.WithHeaderClock(now)   -> same: the middleware's header time is the store's clock.
#   redisstore.WithBudget(d)    -> gone; the budget is core.WithTimeout only.
#   redisstore.NewClient(opt, budget), NewFailoverClient(opt, budget),
#   NewClusterClient(opt, budget), Safe*Options(opt, budget)
#                               -> drop the budget argument (see CHANGELOG.md).
#   core.TierResolver's argument is the lookup key (Request.TierKey, else the
#                                  identity); API-key plans need core.HTTPTierKey.
#   recipes.ClusterStore(seeds, budget), recipes.SentinelStore(m, s, budget)
#                               -> drop the budget argument.
# New errors at construction (check a branch's tests): an option given twice,
#   WithFallback with WithFailureMode(FailOpen|FailClosed), HTTPCost with HTTPCostFunc,
#   HTTPTierKey without WithTierResolver, and (redisstore on a Cluster) a WithTimeout
#   longer than the client's ReadTimeout (the safe clients: up to 500 ms).
#
# v1 (issue 17): the HTTP side of core is its own package, core/httplimit
# (import "github.com/ratelimitkit/ratelimit/core/httplimit"; add it where
# the compiler asks, and drop core's import where nothing else uses it).
# The option family loses its HTTP prefix; the constructor is httplimit.New.
# CHANGELOG.md is history: leave it out of the files the script rewrites.
# Protect the names qualified by another package (echo's e.HTTPErrorHandler).
s/([A-Za-z0-9_])\.(HTTP(Options?|KeyFunc|CostFunc|Cost|TierFunc|TierKey|Skip|Headers|DenyHandler|ErrorHandler|RouteScope|ChargeIf|Finish)|NewMiddleware)\b/\1.__KEEP17__\2/g
s/\bcore\.__KEEP17__/core./g
s/\bcore\.NewMiddleware\b/httplimit.New/g
s/\bNewMiddleware\b/New/g
s/\bcore\.HTTPOptions\b/httplimit.Options/g
s/\bcore\.HTTPOption\b/httplimit.Option/g
s/\bHTTPOption\b/Option/g
s/\bcore\.HTTPKeyFunc\b/httplimit.WithKey/g
s/\bHTTPKeyFunc\b/WithKey/g
s/\bcore\.HTTPCostFunc\b/httplimit.WithCostFunc/g
s/\bHTTPCostFunc\b/WithCostFunc/g
s/\bcore\.HTTPCost\b/httplimit.WithCost/g
s/\bHTTPCost\b/WithCost/g
s/\bcore\.HTTPTierFunc\b/httplimit.WithTier/g
s/\bHTTPTierFunc\b/WithTier/g
s/\bcore\.HTTPTierKey\b/httplimit.WithTierKey/g
s/\bHTTPTierKey\b/WithTierKey/g
s/\bcore\.HTTPSkip\b/httplimit.WithSkip/g
s/\bHTTPSkip\b/WithSkip/g
s/\bcore\.HTTPHeaders\b/httplimit.WithHeaders/g
s/\bHTTPHeaders\b/WithHeaders/g
s/\bcore\.HTTPDenyHandler\b/httplimit.WithDenyHandler/g
s/\bHTTPDenyHandler\b/WithDenyHandler/g
s/\bcore\.HTTPErrorHandler\b/httplimit.WithErrorHandler/g
s/\bHTTPErrorHandler\b/WithErrorHandler/g
s/\bcore\.HTTPRouteScope\b/httplimit.WithRouteScope/g
s/\bHTTPRouteScope\b/WithRouteScope/g
s/\bcore\.HTTPChargeIf\b/httplimit.WithChargeIf/g
s/\bHTTPChargeIf\b/WithChargeIf/g
s/\bcore\.HTTPFinish\b/httplimit.WithFinish/g
s/\bHTTPFinish\b/WithFinish/g
# Moved as they are: core.Name -> httplimit.Name.
s/\bcore\.(Middleware|Outcome|OutcomeFromContext|KeyFunc|CostFunc|SkipFunc|TierFunc|DenyHandler|ErrorHandler|FinishFunc|ChargeFunc)\b/httplimit.\1/g
s/\bcore\.(FailedRequests|SuccessfulRequests|PanicStatus|HijackedStatus|StatusHijacked|StatusClientClosedRequest|ErrorStatus|DenyStatus)\b/httplimit.\1/g
s/\bcore\.(HeaderFormat|Headers(IETF|Legacy|XRateLimit|Off)|Header(RateLimit|XRateLimit|RetryAfter)[A-Za-z]*|SetHeaders)\b/httplimit.\1/g
s/\bcore\.(Problem|ProblemFor|ProblemQuotaExceeded|ProblemTemporaryReducedCapacity|DefaultDenyHandler|DefaultErrorHandler)\b/httplimit.\1/g
s/\bcore\.(RemoteAddrKey|ErrNoRemoteAddr)\b/httplimit.\1/g
s/__KEEP17__//g
# Prose that names echo's own Echo.HTTPErrorHandler unqualified is renamed
# too: the compiler does not see it; read the diff.
