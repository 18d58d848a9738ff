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
type ControlStore interface {
	// SetControl stores value as the control record of the client id (a
	// safe identity) in space, until expires (the zero time: for
	// [MaxControlAge]), or deletes it when value is nil, and logs the change:
	// the generation of space goes up by one, and a read of the changes
	// since an earlier generation names id. It returns the new generation.
	SetControl(ctx context.Context, space, id string, value []byte, expires time.Time) (gen uint64, err error)
	// TouchControl logs a change of id without changing its record (a
	// reset: every node drops its cached denials of id).
	TouchControl(ctx context.Context, space, id string) (gen uint64, err error)
	// Controls returns the changes of space after generation since: the
	// records of the clients changed since (a nil Value for one deleted,
	// expired or only touched... see [ControlChanges]), or every record
	// when since is 0, when the store no longer logs that far back, or
	// when its generation is below since (the store lost its data).
	// Records that expired are not returned.
	Controls(ctx context.Context, space string, since uint64) (ControlChanges, error)
	// DeleteKeys deletes the state keys of a client (a reset) and returns
	// how many existed. The keys of one call share one client's hash tag.
	DeleteKeys(ctx context.Context, keys []string) (deleted int64, err error)
}

// ControlChanges is the answer of [ControlStore.Controls].
type ControlChanges struct {
	// Gen is the store's generation of the space now.
	Gen uint64
	// Full says that Records holds every live record of the space: the
	// reader replaces what it has.
	Full bool
	// Records are the records changed after the generation asked for, with
	// their current value (nil when the client has none now: deleted,
	// expired, or only touched while it had none), or every live record
	// when Full.
	Records []ControlEntry
	// Now is the store's time when it answered (its TIME on Redis), which
	// a reader compares expiries with.
	Now time.Time
}

// A ControlEntry is the stored control record of one client.
type ControlEntry struct {
	ID      string    // the safe identity
	Value   []byte    // the encoded [ControlRecord]; nil: none
	Expires time.Time // when the record stops applying
}

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
