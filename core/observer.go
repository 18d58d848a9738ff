package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"

	"github.com/ratelimitkit/ratelimit/internal/logsample"
)

// An Observer hears about every decision and breaker change of a
// [Limiter] ([WithObserver]): for metrics, logs and abuse detection.
// Its methods run on the request path (Decided) or under the breaker's lock
// (BreakerChanged): they must be fast, must not block, and must not call
// back into the Limiter.
type Observer interface {
	// Decided is called once per [Limiter.Take] that produced a Result,
	// including degraded results (Result.Err says why) and results served
	// from the deny cache.
	Decided(ctx context.Context, req Request, res Result)
	// BreakerChanged is called when the circuit breaker changes state.
	BreakerChanged(from, to BreakerState)
}

// SlogObserver logs rate-limit violations, store failures, leases not
// released ([ReleaseObserver]) or not renewed ([RenewObserver]) and
// breaker changes through a [log/slog] logger, for security monitoring.
// The log itself is rate limited: at most Burst lines, refilled at one per
// Every (defaults 10 and 100 ms); suppressed lines are counted in the next line
// ("suppressed" attribute). Identities are logged as a short SHA-256
// ("client" attribute), never in clear, so logs hold no IPs or API keys.
//
// It also logs the controls ([ControlObserver]): overrides, blocks,
// exemptions and resets an operator made, and policy reloads, each line
// with who and why, unsampled (they are rare, and audited); and lockouts,
// sampled like violations. A limiter without observers logs these too.
//
// A SlogObserver is safe for concurrent use. The zero value is not usable;
// make one with [NewSlogObserver].
type SlogObserver struct {
	log        *logsample.Sampler
	logTo      *slog.Logger // the unsampled log of control events; nil: slog's default
	violations bool         // false: store failures and breaker changes only
}

// NewSlogObserver returns an observer logging to logger with the default
// sampling (10 lines at once, then 10 per second).
func NewSlogObserver(logger *slog.Logger) *SlogObserver {
	return &SlogObserver{log: logsample.New(logger), logTo: logger, violations: true}
}

// failureLog is the observer of a [Limiter] built with no observer: store
// failures and breaker changes on slog's default logger, sampled, so a
// store failing every take open is never silent.
func failureLog() *SlogObserver {
	return &SlogObserver{log: logsample.New(nil)}
}

// Decided logs a denied (or shadow-denied) request at Warn, a degraded
// one at Error, and a request whose tier resolver failed ([Result.TierErr])
// at Warn (also when the SlogObserver is the default failure log). The
// resolver's error text is logged, cut to 256 bytes: it must not hold the
// lookup key.
func (o *SlogObserver) Decided(ctx context.Context, req Request, res Result) {
	if res.TierErr != nil {
		o.log.Emit(ctx, slog.LevelWarn, "ratelimit: tier resolver failed",
			slog.String("client", HashIdentity(req.Identity)), slog.String("tier", res.Tier),
			slog.Bool("stale", errors.Is(res.TierErr, ErrTierStale)), slog.String("error", logsample.ErrorText(res.TierErr)))
	}
	switch {
	case res.Degraded:
		o.log.Emit(ctx, slog.LevelError, "ratelimit: store unavailable, degraded decision",
			slog.String("client", HashIdentity(req.Identity)), slog.String("tier", res.Tier),
			slog.Bool("allowed", res.Allowed), slog.String("error", logsample.ErrorText(res.Err)))
	case o.violations && (!res.Allowed || res.Shadowed):
		b := res.Binding()
		o.log.Emit(ctx, slog.LevelWarn, "ratelimit: limit exceeded",
			slog.String("client", HashIdentity(req.Identity)), slog.String("tier", res.Tier),
			slog.String("limit", b.Limit.Name), slog.String("reason", b.Reason.String()),
			slog.Duration("retry_after", b.RetryAfter), slog.Bool("shadow", res.Shadowed))
	}
}

// Released logs a lease the store could not give back, at Warn: it holds
// its place until its TTL. Released implements [ReleaseObserver].
func (o *SlogObserver) Released(ctx context.Context, res Result, err error) {
	if err == nil {
		return
	}
	o.log.Emit(ctx, slog.LevelWarn, "ratelimit: lease not released, it expires after its TTL",
		slog.String("tier", res.Tier), slog.String("error", logsample.ErrorText(err)))
}

// Renewed logs a lease the middleware could not renew, at Warn: lost (it
// had expired: the request runs on without its place) or not renewed this
// time (the store failed). Renewed implements [RenewObserver].
func (o *SlogObserver) Renewed(ctx context.Context, res Result, err error) {
	if err == nil {
		return
	}
	o.log.Emit(ctx, slog.LevelWarn, "ratelimit: lease not renewed",
		slog.String("tier", res.Tier), slog.String("error", logsample.ErrorText(err)))
}

// BreakerChanged logs the change at Warn.
func (o *SlogObserver) BreakerChanged(from, to BreakerState) {
	o.log.Emit(context.Background(), slog.LevelWarn, "ratelimit: circuit breaker "+to.String(),
		slog.String("from", from.String()), slog.String("to", to.String()))
}

// HashIdentity returns a short, stable, non-reversible name for an
// identity (12 hex digits of its SHA-256), for logs and metrics.
func HashIdentity(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return hex.EncodeToString(sum[:6])
}

// A RenewObserver is an [Observer] that also hears about every renewal of
// a lease ([Limiter.Renew], which the httplimit middleware calls on a
// timer while a handler runs): err is nil when the store pushed the
// lease's expiry, [ErrLeaseLost] (wrapped) when the lease had expired
// already (the request runs on without a place, and is not renewed
// again), else why the store could not be asked (it is tried again at the
// next renewal). Like Decided, Renewed runs off the request path but must
// be fast and must not block.
type RenewObserver interface {
	Observer
	// Renewed is called once per renewal, whatever its outcome.
	Renewed(ctx context.Context, res Result, err error)
}

// renewed tells the observers about a renewal of the lease of res, and
// logs a failed one on the limiter's sampled log when no observer hears
// renewals.
func (l *Limiter) renewed(ctx context.Context, res Result, err error) {
	heard := false
	for _, o := range l.observers {
		if ro, ok := o.(RenewObserver); ok {
			ro.Renewed(ctx, res, err)
			heard = true
		}
	}
	if err != nil && !heard {
		l.renewLog.Emit(ctx, slog.LevelWarn, "ratelimit: lease not renewed",
			slog.String("tier", res.Tier), slog.String("error", logsample.ErrorText(err)))
	}
}
