package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
	"github.com/ratelimitkit/ratelimit/internal/logsample"
)

// ErrNoControls is returned by the control methods of a [Limiter] (and by
// [NewControls]) whose store keeps no controls: it does not implement
// [ControlStore].
var ErrNoControls = errors.New("ratelimit: the store keeps no controls (it does not implement core.ControlStore)")

// MaxControlRecord bounds the encoded [ControlRecord] of one client, 4 KiB:
// every node keeps every record in memory.
const MaxControlRecord = 4 << 10

// maxOperatorLen bounds the operator's name kept in a record.
const maxOperatorLen = 64

// Controls sets, reads and lists the controls of the clients of one key
// prefix (a limiter's space, [WithPrefix]) in a [ControlStore], without a
// [Limiter]: the ratelimit command uses it. A client is named by its safe
// identity ([SafeIdentity] of the identity its requests are limited by),
// as [Controls.List] returns it. A change applies on every node of the
// space within [ControlSyncEvery] and one store round trip, and at once
// on this one.
//
// A change of a client reads its record, changes one part and writes it
// back: two operators changing one client at the same instant may lose
// one change (the last write wins), as with any key-value record.
// Who makes a change is read from the context ([WithOperator]).
//
// The methods of a [Limiter] (Limiter.SetOverride, Limiter.Block...) are
// the same, by raw identity, checked against the limiter's tiers, told to
// its observers. Controls is safe for concurrent use; make one with
// [NewControls].
type Controls struct {
	store ControlStore
	space string // the key prefix
	head  string // keylayout.Head(space)
	now   clockFunc

	// A limiter's Controls reads on the take path too ([Controls.current]).
	takes   bool
	timeout time.Duration // how long a take waits for a read
	local   bool          // the store never blocks: read in the take's goroutine
	poll    bool          // the clock is injected: read it on every take, no timer
	onRead  func(changed []string, full bool, s *controlSnap)

	snap    atomic.Pointer[controlSnap]
	reading atomic.Bool // a read is running: takes need not ask
	mu      sync.Mutex  // orders the snapshots stored, and guards flight and timer
	flight  *controlRead
	timer   *time.Timer
	failLog *logsample.Sampler
}

// NewControls returns the Controls of the key prefix over store, which
// must implement [ControlStore] ([ErrNoControls] otherwise).
func NewControls(store Store, prefix string) (*Controls, error) {
	cs, ok := store.(ControlStore)
	if !ok {
		return nil, fmt.Errorf("%w: %T", ErrNoControls, store)
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	c := &Controls{store: cs, space: prefix, head: keylayout.Head(prefix),
		now: clockOf(CapabilitiesOf(store)), failLog: logsample.New(nil)}
	c.snap.Store(&controlSnap{due: true})
	return c, nil
}

// ClientControls is what [Controls.List] returns of one client: its safe
// identity and the parts of its record still in force.
type ClientControls struct {
	ID string // the safe identity
	ControlRecord
	// Expires is when the record goes: the last Until of its parts.
	Expires time.Time
}

type operatorKey struct{}

// WithOperator returns ctx naming the operator who makes the control
// changes made under it (a user name): it is kept in the record (By),
// logged, and listed. At most 64 bytes.
func WithOperator(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, operatorKey{}, name)
}

// Operator returns the operator named in ctx by [WithOperator], or "".
func Operator(ctx context.Context) string {
	name, _ := ctx.Value(operatorKey{}).(string)
	return name
}

// SetOverride gives the client id the limits of o, in place of its tier's,
// until o.Until (zero: until removed). o needs a Tier or Limits (at most
// 16, each valid, of distinct names); its Reason is at most
// [MaxReasonLen] bytes. By and At are set here.
func (c *Controls) SetOverride(ctx context.Context, id string, o Override) error {
	now := c.storeNow()
	if err := checkOverride(o, now); err != nil {
		return err
	}
	o.By, o.At = operatorOr(ctx, o.By), now
	return c.update(ctx, id, func(r *ControlRecord) { r.Override = &o })
}

// Override returns the override of the client id in force, and whether
// there is one.
func (c *Controls) Override(ctx context.Context, id string) (Override, bool, error) {
	if err := checkID(id); err != nil {
		return Override{}, false, err
	}
	if err := c.sync(ctx, true, true); err != nil {
		return Override{}, false, err
	}
	r := c.snap.Load().record(id, c.storeNow())
	if r.Override == nil {
		return Override{}, false, nil
	}
	return *r.Override, true, nil
}

// RemoveOverride removes the override of the client id, if any.
func (c *Controls) RemoveOverride(ctx context.Context, id string) error {
	return c.update(ctx, id, func(r *ControlRecord) { r.Override = nil })
}

// Block denies every request of the client id for d (at most
// [MaxControlAge]), without a store call: answered [Blocked], with
// Retry-After until the block ends. reason is logged and listed, never
// sent to the client. A block outranks an exemption.
func (c *Controls) Block(ctx context.Context, id string, d time.Duration, reason string) error {
	b, err := newBlock(ctx, d, reason, c.storeNow())
	if err != nil {
		return err
	}
	return c.update(ctx, id, func(r *ControlRecord) { r.Block = &b })
}

// Unblock lifts the block of the client id, if any. (Limiter.Unblock also
// ends the client's lockouts.)
func (c *Controls) Unblock(ctx context.Context, id string) error {
	return c.update(ctx, id, func(r *ControlRecord) { r.Block = nil })
}

// Exempt admits every request of the client id for d (0: until
// removed, at most [MaxControlAge]) without a store call, reporting full
// quotas: a monitoring probe, a partner's integration. reason is logged
// and listed.
func (c *Controls) Exempt(ctx context.Context, id string, d time.Duration, reason string) error {
	e, err := newExempt(ctx, d, reason, c.storeNow())
	if err != nil {
		return err
	}
	return c.update(ctx, id, func(r *ControlRecord) { r.Exempt = &e })
}

// Unexempt ends the exemption of the client id, if any.
func (c *Controls) Unexempt(ctx context.Context, id string) error {
	return c.update(ctx, id, func(r *ControlRecord) { r.Exempt = nil })
}

// List returns the clients that have controls in force, by ID, with the
// parts still in force.
func (c *Controls) List(ctx context.Context) ([]ClientControls, error) {
	if err := c.sync(ctx, true, true); err != nil {
		return nil, err
	}
	return c.snap.Load().list(c.storeNow()), nil
}

// Touch tells every node that the client id changed without changing
// its record (its counters were reset): each drops its cached denials of
// id when it reads the change.
func (c *Controls) Touch(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if _, err := c.store.TouchControl(ctx, c.space, id); err != nil {
		return fmt.Errorf("ratelimit: touch control: %w", err)
	}
	return c.syncFresh(ctx)
}

// DeleteKeys deletes keys, which must all be keys of one client of the
// space (one hash tag), and returns how many existed. Follow it with
// [Controls.Touch], so that the nodes drop their cached denials.
func (c *Controls) DeleteKeys(ctx context.Context, keys []string) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	if err := c.checkKeys(keys); err != nil {
		return 0, err
	}
	n, err := c.store.DeleteKeys(ctx, keys)
	if err != nil {
		return n, fmt.Errorf("ratelimit: delete keys: %w", err)
	}
	return n, nil
}

// checkKeys reports a key not of the space or of another client than the
// first key's.
func (c *Controls) checkKeys(keys []string) error {
	first := keylayout.Parse(keys[0])
	for _, k := range keys {
		n := keylayout.Parse(k)
		if !n.HasTag || n.Prefix != c.space || n.Tag != first.Tag {
			return fmt.Errorf("ratelimit: delete keys: %q is not a key of client %q under prefix %q", k, first.Tag, c.space)
		}
	}
	return nil
}

// update reads the record of id, changes it with f and writes it back,
// then reads the change into this node's snapshot.
func (c *Controls) update(ctx context.Context, id string, f func(*ControlRecord)) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := c.sync(ctx, true, true); err != nil {
		return err
	}
	now := c.storeNow()
	r := c.snap.Load().record(id, now)
	f(&r)
	value, expires, err := encodeRecord(id, r)
	if err != nil {
		return err
	}
	if _, err := c.store.SetControl(ctx, c.space, id, value, expires); err != nil {
		return fmt.Errorf("ratelimit: set control: %w", err)
	}
	return c.syncFresh(ctx)
}

// storeNow is the time by the store's clock, as well as the last read
// knew it: the node's clock corrected by the skew the read saw.
func (c *Controls) storeNow() time.Time {
	return c.now().Add(c.snap.Load().skew)
}

// encodeRecord returns r as stored, with its expiry: nil when r has no
// part left (the record is deleted).
func encodeRecord(id string, r ControlRecord) ([]byte, time.Time, error) {
	if r == (ControlRecord{}) {
		return nil, time.Time{}, nil
	}
	value, err := json.Marshal(r)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("ratelimit: control record of %q: %w", id, err)
	}
	if len(value) > MaxControlRecord {
		return nil, time.Time{}, fmt.Errorf("ratelimit: control record of %q: %d bytes encoded, more than %d", id, len(value), MaxControlRecord)
	}
	return value, r.expires(), nil
}

// expires returns when r stops applying: the last Until of its parts, or
// the zero time when a part has none (kept for MaxControlAge).
func (r ControlRecord) expires() time.Time {
	var last time.Time
	for _, until := range r.untils() {
		if until.IsZero() {
			return time.Time{}
		}
		last = later(last, until)
	}
	return last
}

// untils returns the Until of each part r has.
func (r ControlRecord) untils() []time.Time {
	var us []time.Time
	if r.Override != nil {
		us = append(us, r.Override.Until)
	}
	if r.Block != nil {
		us = append(us, r.Block.Until)
	}
	if r.Exempt != nil {
		us = append(us, r.Exempt.Until)
	}
	return us
}

// live returns r without the parts that ended at now.
func (r ControlRecord) live(now time.Time) ControlRecord {
	if r.Override != nil && ended(r.Override.Until, now) {
		r.Override = nil
	}
	if r.Block != nil && !now.Before(r.Block.Until) { // a block always ends
		r.Block = nil
	}
	if r.Exempt != nil && ended(r.Exempt.Until, now) {
		r.Exempt = nil
	}
	return r
}

// ended reports whether a part that lasts until until (zero: no end) has
// ended at now.
func ended(until, now time.Time) bool {
	return !until.IsZero() && !now.Before(until)
}

// checkID reports an id that is not a safe identity: what [SafeIdentity]
// returns, verbatim or hashed.
func checkID(id string) error {
	if id != "" && (SafeIdentity(id) == id || isHashedIdentity(id)) {
		return nil
	}
	return fmt.Errorf("ratelimit: client %q is not a safe identity (core.SafeIdentity of the client's identity)", logsample.Truncated(id))
}

// isHashedIdentity reports whether id has the form of a hashed safe
// identity: "~" and 22 base64url characters.
func isHashedIdentity(id string) bool {
	if len(id) != 23 || id[0] != '~' {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// checkOverride reports what makes o unusable at now, naming the field.
func checkOverride(o Override, now time.Time) error {
	if o.Tier == "" && len(o.Limits) == 0 {
		return errors.New("ratelimit: override: set Tier or Limits")
	}
	if o.Tier != "" {
		if err := validateName("override Tier", o.Tier, 64); err != nil {
			return err
		}
	}
	if len(o.Limits) > maxLimitsPerTier {
		return fmt.Errorf("ratelimit: override: at most %d Limits, got %d", maxLimitsPerTier, len(o.Limits))
	}
	if err := checkOverrideLimits(o.Limits); err != nil {
		return err
	}
	if err := checkUntil("override Until", o.Until, now); err != nil {
		return err
	}
	return checkNote(o.Reason, o.By)
}

// checkOverrideLimits reports an invalid limit or a name given twice.
func checkOverrideLimits(limits []Limit) error {
	seen := make(map[string]bool, len(limits))
	for i, l := range limits {
		if err := l.validate(); err != nil {
			return fmt.Errorf("ratelimit: override: Limits[%d]: %w", i, err)
		}
		name := l.EffectiveName()
		if seen[name] {
			return fmt.Errorf("ratelimit: override: Limits[%d]: duplicate limit Name %q", i, name)
		}
		seen[name] = true
	}
	return nil
}

// checkUntil reports an end that is not in the future, or farther than
// MaxControlAge; zero (no end) is fine.
func checkUntil(field string, until, now time.Time) error {
	switch {
	case until.IsZero():
		return nil
	case !until.After(now):
		return fmt.Errorf("ratelimit: %s %s is not in the future", field, until.Format(time.RFC3339))
	case until.Sub(now) > MaxControlAge:
		return fmt.Errorf("ratelimit: %s %s is more than %s away", field, until.Format(time.RFC3339), MaxControlAge)
	}
	return nil
}

// checkDuration reports a duration of a control out of (0, MaxControlAge]
// (0 allowed when zeroOK: no end).
func checkDuration(field string, d time.Duration, zeroOK bool) error {
	if d < 0 || d == 0 && !zeroOK || d > MaxControlAge {
		return fmt.Errorf("ratelimit: %s must be in (0, %s], got %s", field, MaxControlAge, d)
	}
	return nil
}

// checkNote reports a reason or an operator name too long or not UTF-8.
func checkNote(reason, by string) error {
	switch {
	case len(reason) > MaxReasonLen:
		return fmt.Errorf("ratelimit: reason is %d bytes, more than %d", len(reason), MaxReasonLen)
	case !utf8.ValidString(reason):
		return errors.New("ratelimit: reason is not valid UTF-8")
	case len(by) > maxOperatorLen:
		return fmt.Errorf("ratelimit: operator %q is longer than %d bytes", logsample.Truncated(by), maxOperatorLen)
	case !utf8.ValidString(by):
		return errors.New("ratelimit: operator is not valid UTF-8")
	}
	return nil
}

// operatorOr returns the operator of ctx, or by when it names none.
func operatorOr(ctx context.Context, by string) string {
	if op := Operator(ctx); op != "" {
		return op
	}
	return by
}

// newBlock returns a block of d from now, checked.
func newBlock(ctx context.Context, d time.Duration, reason string, now time.Time) (Block, error) {
	if err := checkDuration("block duration", d, false); err != nil {
		return Block{}, err
	}
	b := Block{Until: now.Add(d), Reason: reason, By: Operator(ctx), At: now}
	return b, checkNote(b.Reason, b.By)
}

// newExempt returns an exemption of d from now (0: no end), checked.
func newExempt(ctx context.Context, d time.Duration, reason string, now time.Time) (Exempt, error) {
	if err := checkDuration("exemption duration", d, true); err != nil {
		return Exempt{}, err
	}
	e := Exempt{Reason: reason, By: Operator(ctx), At: now}
	if d > 0 {
		e.Until = now.Add(d)
	}
	return e, checkNote(e.Reason, e.By)
}

// list returns the clients of s with controls in force at now, by ID.
func (s *controlSnap) list(now time.Time) []ClientControls {
	var out []ClientControls
	for id, cc := range s.clients {
		r := cc.rec.live(now)
		if r == (ControlRecord{}) {
			continue
		}
		out = append(out, ClientControls{ID: id, ControlRecord: r, Expires: cc.expires})
	}
	slices.SortFunc(out, func(a, b ClientControls) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// record returns the parts of id's record in force at now (a copy the
// caller may change).
func (s *controlSnap) record(id string, now time.Time) ControlRecord {
	cc := s.clients[id]
	if cc == nil {
		return ControlRecord{}
	}
	return cc.rec.live(now)
}
