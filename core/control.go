package core

import (
	"context"
	"time"
)

// Controls are what an operator sets on one client, apart from the tiers:
// an [Override] of its limits, a block, an exemption. They are kept in the
// store, under the limiter's key prefix (its space), so that every node of
// an API applies them; each node keeps a copy and reads the changes once a
// second ([ControlSyncEvery]), so the hot path makes no store call for them.
//
// A [Store] that keeps controls implements ControlStore; core/memstore and
// core/redisstore do. The store keeps records as opaque bytes: the limiter
// encodes and decodes them (a [ControlRecord] as JSON).
//
// Every change of a space (a record set or deleted, a client touched, a
// record purged after it expired) raises the space's generation, and the
// store logs, per client, the generation of its last change, for the newest
// [ControlLogLen] clients changed. A reader keeps the generation it read
// last and asks for the changes since: one small call when nothing changed.
// A space the store does not have (new, or lost: expired, flushed, a
// restart without persistence) starts at a generation of the store's clock
// in µs since 2024 and logs nothing before it, so a reader of the lost
// space, whose generation is lower, reads everything again.
// Times (expiries, [ControlChanges].Now) are the store's own, the injected
// clock of a test store included.
type ControlStore interface {
	// SetControl stores value as the control record of the client id (a
	// safe identity, [SafeIdentity]) in space (a limiter's key prefix),
	// until expires (the zero time, or an instant further than
	// [MaxControlAge] ahead: for MaxControlAge), or deletes the record
	// when value is nil, and logs the change: the generation of space goes
	// up by one, and a read of the changes since an earlier generation
	// names id. The same call purges records that expired (up to a
	// store-defined number per call), logging each as a change. A value
	// longer than [MaxControlSize], an empty non-nil value, or a space or
	// id that cannot be part of a key is an error naming it. It returns
	// the new generation.
	SetControl(ctx context.Context, space, id string, value []byte, expires time.Time) (gen uint64, err error)
	// TouchControl logs a change of id without changing its record (a
	// reset: every node drops its cached denials of id). It purges and
	// returns the new generation as SetControl does.
	TouchControl(ctx context.Context, space, id string) (gen uint64, err error)
	// Controls returns the changes of space after generation since: the
	// clients changed since, each with its record now (see
	// [ControlChanges]); or every live record (Full) when since is 0, when
	// the store no longer logs that far back, or when its generation is
	// below since (the store lost its data). Records that expired by the
	// store's clock are never returned. Controls writes nothing.
	Controls(ctx context.Context, space string, since uint64) (ControlChanges, error)
	// DeleteKeys deletes the state keys of a client (a reset: the keys of
	// its limits, of any algorithm, and its lockout state) and returns how
	// many existed with live state. The keys of one call must share one
	// client's hash tag (one Cluster slot); keys of several tags, or of
	// the controls' own tag, are an error, and none is deleted.
	DeleteKeys(ctx context.Context, keys []string) (deleted int64, err error)
}

// ControlChanges is the answer of [ControlStore.Controls].
type ControlChanges struct {
	// Gen is the store's generation of the space now.
	Gen uint64
	// Full says that Records holds every live record of the space: the
	// reader replaces what it has.
	Full bool
	// Records are the clients changed after the generation asked for, each
	// once, with its current record (a nil Value when the client has none
	// now: deleted, expired, or only touched while it had none), or every
	// live record when Full. Their order is unspecified.
	Records []ControlEntry
	// Now is the store's time when it answered (its TIME on Redis), which
	// a reader compares expiries with.
	Now time.Time
}

// A ControlEntry is the stored control record of one client.
type ControlEntry struct {
	ID      string    // the safe identity
	Value   []byte    // the encoded [ControlRecord]; nil: none
	Expires time.Time // when the record stops applying; zero when Value is nil
}

// MaxControlSize is the longest control record a [ControlStore] keeps, in
// bytes: [ControlStore.SetControl] refuses a longer one.
const MaxControlSize = 4 << 10

// ControlLogLen is how many changes a [ControlStore] logs per space: those
// of the ControlLogLen clients changed last. A reader further behind reads
// every record ([ControlChanges].Full).
const ControlLogLen = 4096

// ControlSyncEvery is how often a [Limiter] over a [ControlStore] reads the
// changes of its space: a control set on one node applies on every other
// node within this (plus one store round trip).
const ControlSyncEvery = time.Second

// MaxControlAge is how long a control set without an expiry is kept: every
// key has a TTL. Set it again to keep it longer.
const MaxControlAge = 366 * 24 * time.Hour

// MaxReasonLen bounds the reason an operator gives a control: it is
// logged, never sent to a client.
const MaxReasonLen = 256

// A ControlRecord is everything an operator set on one client of one
// limiter. Each part is optional; the record expires with its last part.
type ControlRecord struct {
	Override *Override `json:"override,omitempty"`
	Block    *Block    `json:"block,omitempty"`
	Exempt   *Exempt   `json:"exempt,omitempty"`
}

// An Override gives one client limits of its own, in place of its tier's.
type Override struct {
	// Tier, when not empty, is the tier whose limits the client gets
	// instead of its own (a customer on the pro plan given enterprise's).
	Tier string `json:"tier,omitempty"`
	// Limits replace the limits of the same Name in the client's tier (or
	// in Tier); a limit keeps its usage when its Name and Algorithm stay.
	// A name the tier does not have is ignored.
	Limits []Limit `json:"limits,omitempty"`
	// Until is when the override stops applying; zero: until removed
	// (kept for [MaxControlAge]).
	Until time.Time `json:"until,omitzero"`
	// Reason is the operator's note: logged and listed, never sent to the
	// client.
	Reason string `json:"reason,omitempty"`
	// By is who set it (the CLI puts the operator's user name).
	By string `json:"by,omitempty"`
	// At is when it was set.
	At time.Time `json:"at,omitzero"`
}

// A Block denies every request of one client until Until, without a store
// call: the client reads a denial ([Blocked]) with Retry-After until then.
type Block struct {
	Until  time.Time `json:"until"`
	Reason string    `json:"reason,omitempty"`
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

// An Exempt client is admitted without a store call until Until (zero:
// until removed): a monitoring probe, a partner's integration.
type Exempt struct {
	Until  time.Time `json:"until,omitzero"`
	Reason string    `json:"reason,omitempty"`
	By     string    `json:"by,omitempty"`
	At     time.Time `json:"at,omitzero"`
}
