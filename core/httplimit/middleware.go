package httplimit

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/errwrap"
	"github.com/ratelimitkit/ratelimit/internal/logsample"
	"github.com/ratelimitkit/ratelimit/internal/proxyhint"
)

// A KeyFunc returns the identity of the client that sent r ([core.Request]'s
// Identity). An error stops the request: the [Middleware] hands it to its
// [ErrorHandler]. An empty identity is valid: every request that gets it
// shares one quota. The rich extractors of the keyfunc package (proxy-aware
// addresses, API keys, composites) are KeyFuncs; this is an alias so that
// keyfunc.Func values pass without conversion.
type KeyFunc = func(r *http.Request) (string, error)

// A CostFunc returns how much quota r uses ([core.Request]'s Cost). A cost of 0
// is a free request, not a peek: it is admitted only when a request of
// cost 1 would be, and charges nothing (see [WithCostFunc]). A negative
// cost is the request's fault: it is refused with 400 ([core.ErrInvalidCost]).
type CostFunc = func(r *http.Request) int64

// A SkipFunc reports whether r bypasses the limiter (an allow-list: health
// checks, internal callers). A skipped request gets no rate-limit fields.
type SkipFunc = func(r *http.Request) bool

// A TierFunc returns the tier of r, typically from its API key's plan
// ([core.Request]'s Tier). Empty means: ask the limiter's [core.TierResolver], or
// apply the default tier.
type TierFunc = func(r *http.Request) string

// A DenyHandler writes the response to a request the limiter denied. The
// rate-limit fields and Retry-After are already set; [DenyStatus] tells
// which status fits.
type DenyHandler = func(w http.ResponseWriter, r *http.Request, res core.Result)

// An ErrorHandler writes the response to a request that could not be
// limited: its key or cost function failed. It must not send err's text to
// the client.
type ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error)

// A Middleware is the HTTP side of a [core.Limiter], shared by every framework
// adapter: it picks the identity, tier and cost of a request, takes the
// limiter, sets the rate-limit fields and renders denials and errors, and
// runs the work after the handler. An adapter calls [Middleware.Serve]
// with the route template, how to run the rest of its chain and how to
// read the response's status, and stops the chain when the [Outcome] is
// not Allowed ([Middleware.Deny]); [Middleware.Handler] is that for
// http.Handler routers. When a tier has a [core.Concurrency] limit, an admitted request holds a lease
// while its handler runs: the middleware renews it every third of its
// lease TTL ([core.Limiter.Renew], on a timer, no goroutine waiting per
// request), so a request that runs longer than the TTL keeps its place,
// and Serve stops the renewals and gives the lease back when the handler
// returns or panics. A renewal that fails is reported to the limiter's
// [core.RenewObserver]s (core.SlogObserver logs it), never turned into a
// response.
//
// The handler of an admitted request gets it with its [Outcome] in its
// context ([OutcomeFromContext]). A request is decided once per limiter:
// a request that a middleware of the same limiter admitted earlier on its
// path (a router-wide mount and a route's, a group's and its route's)
// passes without a second take, a second log line or a second release;
// a middleware of another limiter decides it as usual.
//
// Mount the middleware inside any wrapper that abandons its handler at a
// timeout (http.TimeoutHandler, echo's middleware.Timeout), never between
// such a wrapper and the work: the wrapper returns while the work goes
// on, and a middleware outside it would release the work's lease then
// (see [core.Concurrent]).
//
// A Middleware is safe for concurrent use. Make one with [New].
type Middleware struct {
	limiter     *core.Limiter
	key         KeyFunc
	cost        CostFunc
	skip        SkipFunc
	tier        TierFunc
	routeScope  bool
	deny        DenyHandler
	onError     ErrorHandler
	tierKey     KeyFunc
	finish      FinishFunc         // the WithFinish func, or nil
	chargeIf    ChargeFunc         // WithChargeIf's: charge after the handler; nil: before
	after       []FinishFunc       // the work after the handler, in order (orderFinish); nil: none
	customDeny  bool               // deny set by WithDenyHandler
	customError bool               // onError set by WithErrorHandler
	peek        bool               // WithCost(0): every request is a peek
	leased      bool               // a tier has a Concurrency limit
	costBy      string             // the cost option given, during construction
	given       map[string]bool    // the single-valued options given, during construction
	errLog      *logsample.Sampler // the default error handler's and the charge's
	hint        *proxyhint.Hint    // nil unless keyed by RemoteAddrKey, the default
	formats     HeaderFormat
	fields      atomic.Pointer[tierFields] // the fields of every tier, formatted once per set of tiers
	now         func() time.Time           // the limiter's: its store's clock, or time.Now
}

// New returns a Middleware over l configured by opts. Without
// options it keys by peer address ([RemoteAddrKey]), charges 1 per request,
// applies the tier the limiter picks, counts all routes of a client
// together, writes the [HeadersIETF] fields and renders denials with
// [DefaultDenyHandler] and errors with [DefaultErrorHandler]. An invalid
// option is an error naming it; so is an option given twice, or two that
// contradict each other ([WithCost] and [WithCostFunc]; [WithChargeIf]
// and WithCost(0), or a [core.Concurrency] limit).
func New(l *core.Limiter, opts ...Option) (*Middleware, error) {
	if l == nil {
		return nil, errors.New("ratelimit: middleware: limiter must not be nil")
	}
	m := &Middleware{limiter: l, key: RemoteAddrKey, deny: DefaultDenyHandler,
		errLog: logsample.New(nil), formats: HeadersIETF, now: l.Now}
	m.onError = m.defaultError
	m.fields.Store(newTierFields(l))
	m.hint = newProxyHint()
	m.given = map[string]bool{}
	for _, opt := range opts {
		if err := opt(m); err != nil {
			return nil, err
		}
	}
	if err := m.checkCharge(); err != nil {
		return nil, err
	}
	m.orderFinish()
	m.peek = m.given["WithCost(0)"]
	_, _, m.leased = l.ConcurrencyLimit()
	m.given, m.costBy = nil, ""
	return m, nil
}

// An Outcome is what [Middleware.Decide] concluded about one request.
type Outcome struct {
	// Result is the limiter's answer; zero when the request was skipped or
	// failed.
	Result core.Result
	// Err is set when the request could not be limited (its key or cost
	// function failed); it is for the [ErrorHandler], never for the client.
	Err error
	// Skipped is set when a [SkipFunc] let the request bypass the limiter.
	Skipped bool

	charge    core.Request // what to charge after the handler ([WithChargeIf]); Cost 0: nothing
	admission *admission   // the context of an admitted request; nil otherwise
	again     bool         // admitted before by the same limiter: nothing to finish
}

// Request returns r, the request o was decided for, as its handler must
// get it: with o in its context ([OutcomeFromContext]) when the middleware
// admitted it, r itself otherwise. Adapters hand the handler this request
// (gin: c.Request = o.Request(c.Request); echo: c.SetRequest).
func (o Outcome) Request(r *http.Request) *http.Request { return o.admission.request(r) }

// Allowed reports whether the request goes on to the next handler: it was
// skipped or admitted (also when admitted degraded, failing open).
func (o Outcome) Allowed() bool { return o.allowed() }

// allowed is [Outcome.Allowed], without copying o.
func (o *Outcome) allowed() bool {
	return o.Err == nil && (o.Skipped || o.Result.Allowed)
}

// Status returns the status of the response to a stopped request:
// [ErrorStatus] for an error (500; 499 when the client went away), else
// [DenyStatus]; 200 when the request is allowed.
func (o Outcome) Status() int {
	switch {
	case o.Err != nil:
		return ErrorStatus(o.Err)
	case o.Allowed():
		return http.StatusOK
	}
	return DenyStatus(o.Result)
}

// Decide limits r, whose route template is route ("/users/:id"; empty when
// no route matched), and sets the rate-limit fields and Retry-After on w.
// It writes no status and no body: when the Outcome is not Allowed, the
// adapter stops the request and calls [Middleware.Deny] (or, for a
// framework that renders its own errors, see [Middleware.Custom]).
//
// route must be the template the framework matched, never the raw path,
// which lets a client mint a fresh quota per URL; it is used only with
// [WithRouteScope].
//
// A request that a middleware of the same limiter admitted before (its
// context says so) is Allowed again, with the first Outcome's Result, and
// nothing is taken, set or finished for it. An admitted request's lease,
// when it holds one, is renewed from now until the work after the handler
// releases it: an adapter uses [Middleware.Serve], which calls Decide and
// runs that work; Decide alone fits only a middleware that does not
// [Middleware.Finishes].
func (m *Middleware) Decide(w http.ResponseWriter, r *http.Request, route string) (o Outcome) {
	m.decide(w, r, route, &o)
	return o
}

// decide is [Middleware.Decide], into o, which is zero: an Outcome is a
// few hundred bytes, not worth copying on every request.
func (m *Middleware) decide(w http.ResponseWriter, r *http.Request, route string, o *Outcome) {
	if a, ok := r.Context().Value(decidedBy{m.limiter}).(*admission); ok {
		o.Result, o.again = a.res, true
		return
	}
	if m.skip != nil && m.skip(r) {
		o.Skipped = true
		return
	}
	if m.hint != nil {
		m.hint.Observe(r)
	}
	id, err := m.key(r)
	if err != nil {
		o.Err = errwrap.Wrap("ratelimit: ", "key", err)
		return
	}
	if m.routeScope {
		id = core.Identity(route, id)
	}
	req := core.Request{Identity: id, Cost: 1, Route: route}
	if m.tier != nil {
		req.Tier = m.tier(r)
	}
	if m.tierKey != nil && req.Tier == "" {
		if req.TierKey, err = m.tierKey(r); err != nil {
			o.Err = errwrap.Wrap("ratelimit: ", "tier key", err)
			return
		}
		if req.TierKey == "" {
			req.Tier = m.limiter.DefaultTier() // no key, no plan to look up
		}
	}
	free := false
	if m.cost != nil {
		if req.Cost, free, err = m.costOf(r); err != nil {
			o.Err = err
			return
		}
	}
	switch {
	case free:
		o.Result, _, err = m.limiter.Check(r.Context(), req) // never charged after the handler
	case m.chargeIf == nil:
		o.Result, err = m.limiter.Take(r.Context(), req)
	default:
		o.Result, o.charge, err = m.limiter.Check(r.Context(), req) // what to charge after the handler
	}
	if err != nil {
		*o = Outcome{Err: err}
		return
	}
	if o.Result.Allowed {
		m.admit(r, o)
	}
	var now time.Time // only the epoch X-RateLimit-Reset reads it: a clock read is ~25-40 ns
	if m.formats&HeadersXRateLimit != 0 {
		now = m.now()
	}
	if m.fields.Load().set(w.Header(), &o.Result, m.formats, now) {
		m.fields.Store(newTierFields(m.limiter)) // the limiter's tiers changed
	}
}

// Deny writes the response to a request Decide did not allow: the
// [ErrorHandler] when o.Err is set, else the [DenyHandler].
func (m *Middleware) Deny(w http.ResponseWriter, r *http.Request, o Outcome) {
	if o.Err != nil {
		m.onError(w, r, o.Err)
		return
	}
	m.deny(w, r, o.Result)
}

// defaultError is [DefaultErrorHandler] with m's own log sampler.
func (m *Middleware) defaultError(w http.ResponseWriter, r *http.Request, err error) {
	logRequestError(m.errLog, r, err)
	writeRequestError(w, err)
}

// Custom reports whether [Middleware.Deny] would write o with a handler
// the user gave ([WithErrorHandler] for an error, [WithDenyHandler] for a
// denial) rather than a default one. An adapter whose framework renders
// its own errors uses it to leave the defaults to the framework.
func (m *Middleware) Custom(o Outcome) bool {
	if o.Err != nil {
		return m.customError
	}
	return m.customDeny
}

// Handler returns next limited by m, for routers built on http.Handler
// (net/http, chi). route returns the route template of a request. When m
// [Middleware.Finishes], next writes through a status-recording wrapper
// (which keeps http.Flusher, http.Hijacker and http.ResponseController
// working) and the work after the handler gets its status
// ([Middleware.Serve]); otherwise next gets w as is.
func (m *Middleware) Handler(next http.Handler, route func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := m.Serve(w, r, route(r), next.ServeHTTP, nil); !o.Allowed() {
			m.Deny(w, r, o)
		}
	})
}
