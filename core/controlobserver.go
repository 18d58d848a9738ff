package core

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ratelimitkit/ratelimit/internal/logsample"
)

// ControlKind says what a [ControlEvent] reports.
type ControlKind uint8

const (
	// ControlOverrideSet: an operator gave a client an override
	// ([Limiter.SetOverride]).
	ControlOverrideSet ControlKind = iota + 1
	// ControlOverrideRemoved: an operator removed a client's override.
	ControlOverrideRemoved
	// ControlBlocked: an operator blocked a client ([Limiter.Block]).
	ControlBlocked
	// ControlUnblocked: an operator lifted a client's block and lockouts.
	ControlUnblocked
	// ControlExempted: an operator exempted a client ([Limiter.Exempt]).
	ControlExempted
	// ControlUnexempted: an operator ended a client's exemption.
	ControlUnexempted
	// ControlReset: an operator reset a client's usage ([Limiter.Reset]).
	ControlReset
	// ControlLockedOut: the store answered a take of a client [LockedOut]:
	// a limit's [Lockout] locked it out. The deny cache answers the
	// client's next requests until the lockout ends, so with it on (the
	// default) a node reports a lockout about once.
	ControlLockedOut
	// ControlReloaded: the limiter took a new policy ([Limiter.ReportReload]).
	ControlReloaded
	// ControlReloadFailed: a new policy was refused; the old one still
	// applies.
	ControlReloadFailed
)

var controlKindNames = [...]string{"", "override_set", "override_removed", "blocked", "unblocked", "exempted",
	"unexempted", "reset", "locked_out", "reload_ok", "reload_failed"}

// String returns the kind's name: "override_set", "override_removed",
// "blocked", "unblocked", "exempted", "unexempted", "reset",
// "locked_out", "reload_ok" or "reload_failed".
func (k ControlKind) String() string {
	if k == 0 || int(k) >= len(controlKindNames) {
		return fmt.Sprintf("ControlKind(%d)", uint8(k))
	}
	return controlKindNames[k]
}

// A ControlEvent is what a [ControlObserver] hears: a control changed by
// this limiter, a lockout it answered, a policy reload. Fields that do not
// apply to its Kind are zero.
type ControlEvent struct {
	Kind ControlKind
	// Identity is the client's identity as the caller gave it (a raw IP,
	// a hashed API key): hash it before it reaches a log or a metric, as
	// [SlogObserver] does ([HashIdentity]).
	Identity string
	// Tier is the tier the event concerns: an override's Tier, the tier
	// of a locked-out request.
	Tier string
	// Limits are the limits the event concerns: those an override
	// replaces, those a reset cleared (nil: all), the one that locked the
	// client out.
	Limits []string
	// Until is when the control ends (zero: it does not).
	Until time.Time
	// RetryAfter is how long a locked-out client waits.
	RetryAfter time.Duration
	// Deleted is how many keys a reset or an unblock deleted.
	Deleted int64
	// Reason is the operator's reason: logged, never sent to a client.
	Reason string
	// By is the operator ([WithOperator]).
	By string
	// Err is why a reload failed.
	Err error
}

// A ControlObserver is an [Observer] that also hears about controls
// ([WithObserver]): every control this limiter sets or removes, every
// lockout it answers, every policy reload reported to it, and how many
// overrides and blocks its node's snapshot holds in force. Like Decided,
// its methods must be fast, must not block, and must not call back into
// the Limiter.
type ControlObserver interface {
	Observer
	// Controlled is called once per event, after the change was made.
	Controlled(ctx context.Context, ev ControlEvent)
	// ControlsActive is called when the number of clients with an
	// override, or with a block, in force in the node's snapshot changed,
	// as seen when the node reads the controls (once a second while it
	// serves).
	ControlsActive(overrides, blocks int)
}

// tell tells the limiter's ControlObservers ev.
func (l *Limiter) tell(ctx context.Context, ev ControlEvent) {
	for _, o := range l.observers {
		if co, ok := o.(ControlObserver); ok {
			co.Controlled(ctx, ev)
		}
	}
}

// ReportReload tells the limiter's observers that a new policy was
// applied (err nil) or refused (err says why; the old policy still
// applies): core/policy calls it, after [Limiter.SetTiers] or for a
// policy that failed validation, so that reloads are logged and counted
// with the limiter's other events.
func (l *Limiter) ReportReload(ctx context.Context, err error) {
	ev := ControlEvent{Kind: ControlReloaded, Err: err}
	if err != nil {
		ev.Kind = ControlReloadFailed
	}
	l.tell(ctx, ev)
}

// lockedOut tells the observers of a take of req that the store answered
// [LockedOut] (res), when one of its limits says so.
func (l *Limiter) lockedOut(ctx context.Context, req *Request, p *plan, res *Result) {
	for i := range res.Len() {
		if v := res.verdict(i); v.reason == LockedOut {
			l.tell(ctx, ControlEvent{Kind: ControlLockedOut, Identity: req.Identity, Tier: p.name,
				Limits: []string{res.limits[i].Name}, RetryAfter: v.retryAfter})
			return
		}
	}
}

// reportActive tells the observers how many overrides and blocks s holds
// in force, when that changed since the last report.
func (l *Limiter) reportActive(s *controlSnap) {
	if !l.ctlObserved {
		return
	}
	now := l.now().Add(s.skew)
	var n [2]int
	for _, cc := range s.clients {
		r := cc.rec.live(now)
		if r.Override != nil {
			n[0]++
		}
		if r.Block != nil {
			n[1]++
		}
	}
	if n == l.active {
		return
	}
	l.active = n
	for _, o := range l.observers {
		if co, ok := o.(ControlObserver); ok {
			co.ControlsActive(n[0], n[1])
		}
	}
}

// Controlled logs ev: a control change or a reload at Info, a failed
// reload at Error (unsampled: operators' actions are rare and audited),
// a lockout at Warn (sampled, as violations are). The client is logged
// hashed ([HashIdentity]); the operator's reason is logged.
// Controlled implements [ControlObserver].
func (o *SlogObserver) Controlled(ctx context.Context, ev ControlEvent) {
	attrs := controlAttrs(ev)
	switch ev.Kind {
	case ControlLockedOut:
		o.log.Emit(ctx, slog.LevelWarn, "ratelimit: client locked out", attrs...)
	case ControlReloadFailed:
		o.logger().LogAttrs(ctx, slog.LevelError, "ratelimit: policy refused, the old one still applies", attrs...)
	case ControlReloaded:
		o.logger().LogAttrs(ctx, slog.LevelInfo, "ratelimit: policy reloaded", attrs...)
	default:
		o.logger().LogAttrs(ctx, slog.LevelInfo, "ratelimit: control "+ev.Kind.String(), attrs...)
	}
}

// ControlsActive logs nothing: metrics report it. It implements
// [ControlObserver].
func (o *SlogObserver) ControlsActive(overrides, blocks int) {}

// logger returns the observer's logger, or slog's default one.
func (o *SlogObserver) logger() *slog.Logger {
	if o.logTo != nil {
		return o.logTo
	}
	return slog.Default()
}

// controlAttrs returns the log attributes of ev: those it has.
func controlAttrs(ev ControlEvent) []slog.Attr {
	attrs := []slog.Attr{slog.String("event", ev.Kind.String())}
	if ev.Identity != "" || ev.Kind < ControlReloaded {
		attrs = append(attrs, slog.String("client", HashIdentity(ev.Identity)))
	}
	add := func(ok bool, a slog.Attr) {
		if ok {
			attrs = append(attrs, a)
		}
	}
	add(ev.Tier != "", slog.String("tier", ev.Tier))
	add(len(ev.Limits) > 0, slog.Any("limits", ev.Limits))
	add(!ev.Until.IsZero(), slog.Time("until", ev.Until))
	add(ev.RetryAfter > 0, slog.Duration("retry_after", ev.RetryAfter))
	add(ev.Kind == ControlReset || ev.Kind == ControlUnblocked, slog.Int64("deleted", ev.Deleted))
	add(ev.Reason != "", slog.String("reason", logsample.Truncated(ev.Reason)))
	add(ev.By != "", slog.String("by", ev.By))
	add(ev.Err != nil, slog.String("error", logsample.ErrorText(ev.Err)))
	return attrs
}
