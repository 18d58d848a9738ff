package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

var _ core.ControlStore = (*Store)(nil)

// maxPurge is how many expired records one write purges at most, the
// earliest expiries first, as the Redis store's program does: a write
// after a mass expiry costs a bounded time, and the rest go with the next
// writes (reads never return an expired record anyway).
const maxPurge = 1024

// maxControlAge is [core.MaxControlAge] in µs.
const maxControlAge = int64(core.MaxControlAge / time.Microsecond)

// controls are the control records of every space of a [Store], under one
// lock: they change at an operator's pace, not a request's.
type controls struct {
	mu     sync.Mutex
	spaces map[string]*space
}

// A space is the controls of one key prefix, what the Redis store keeps
// under <prefix>:{~ctl}.
type space struct {
	gen      uint64            // the generation
	trimmed  uint64            // the newest generation no longer in log
	records  map[string]record // by client id
	log      map[string]uint64 // client id → the generation of its last change
	expireAt int64             // µs: the space is gone after it, as the keys of Redis
}

// A record is the control record of one client.
type record struct {
	value   []byte
	expires int64 // µs since the epoch: live while now < expires
}

// SetControl implements [core.ControlStore]: it stores value (a copy) as
// the record of id in space until expires by the store's clock
// ([WithClock]), or deletes it when value is nil, purges up to 1024
// expired records, and logs every change under one new generation.
func (s *Store) SetControl(ctx context.Context, space, id string, value []byte, expires time.Time) (uint64, error) {
	if err := checkControl(ctx, space, id, value); err != nil {
		return 0, err
	}
	now := s.clock()
	c := &s.controls
	c.mu.Lock()
	defer c.mu.Unlock()
	sp, gen := c.write(space, now)
	if value == nil {
		delete(sp.records, id)
	} else {
		sp.records[id] = record{value: slices.Clone(value), expires: expiryMicros(expires, now)}
	}
	sp.changed(id, gen, now)
	return gen, nil
}

// TouchControl implements [core.ControlStore]: it logs a change of id
// (and purges) under a new generation, leaving its record as it is.
func (s *Store) TouchControl(ctx context.Context, space, id string) (uint64, error) {
	if err := checkControl(ctx, space, id, nil); err != nil {
		return 0, err
	}
	now := s.clock()
	c := &s.controls
	c.mu.Lock()
	defer c.mu.Unlock()
	sp, gen := c.write(space, now)
	sp.changed(id, gen, now)
	return gen, nil
}

// Controls implements [core.ControlStore]: the records changed after
// since, or every live record, by the store's clock.
func (s *Store) Controls(ctx context.Context, space string, since uint64) (core.ControlChanges, error) {
	if err := checkSpace(ctx, space); err != nil {
		return core.ControlChanges{}, err
	}
	now := s.clock()
	c := &s.controls
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := core.ControlChanges{Now: keylayout.FromEpochMicros(now)}
	sp := c.live(space, now)
	if sp == nil {
		ch.Full = true // since 0 asks for it; a higher since, data lost
		return ch, nil
	}
	ch.Gen = sp.gen
	if since == 0 || since < sp.trimmed || sp.gen < since {
		ch.Full, ch.Records = true, sp.all(now)
		return ch, nil
	}
	ch.Records = sp.since(since, now)
	return ch, nil
}

// DeleteKeys implements [core.ControlStore]: it deletes the entries of
// keys, whatever they hold (the state of a limit of any algorithm, a
// lockout state), and returns how many held live state.
func (s *Store) DeleteKeys(ctx context.Context, keys []string) (int64, error) {
	if err := checkDeleteKeys(ctx, keys); err != nil {
		return 0, err
	}
	if len(keys) == 0 {
		return 0, nil
	}
	now := s.clock()
	sh := &s.shards[s.shardOf(keys[0])] // one tag: one shard
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var n int64
	for _, k := range keys {
		if e := sh.entries[k]; e != nil {
			if !e.expired(now) {
				n++
			}
			delete(sh.entries, k)
		}
	}
	return n, nil
}

// live returns the space named name at now, or nil when it has none (never
// written, or expired: dropped then).
func (c *controls) live(name string, now int64) *space {
	sp := c.spaces[name]
	if sp != nil && now > sp.expireAt {
		delete(c.spaces, name)
		return nil
	}
	return sp
}

// write returns the space name, created if needed, for a write at now, and
// the generation of that write. A new space starts at the generation now
// (µs), with nothing logged before it: a reader of a space the store lost,
// whose generation is lower, reads everything again.
func (c *controls) write(name string, now int64) (*space, uint64) {
	sp := c.live(name, now)
	if sp == nil {
		if c.spaces == nil {
			c.spaces = map[string]*space{}
		}
		g := uint64(max(now, 0))
		sp = &space{gen: g, trimmed: g, records: map[string]record{}, log: map[string]uint64{}}
		c.spaces[name] = sp
	}
	sp.gen++
	sp.expireAt = now + maxControlAge
	return sp, sp.gen
}

// changed ends a write of generation gen at now that changed id: it logs
// id, purges the expired records, logging them too, and trims the log.
func (sp *space) changed(id string, gen uint64, now int64) {
	sp.log[id] = gen
	sp.purge(gen, now)
	sp.trim()
}

// purge deletes up to maxPurge expired records, the earliest expiries
// first (then by id, as a Redis sorted set orders them), and logs them.
func (sp *space) purge(gen uint64, now int64) {
	var expired []string
	for id, r := range sp.records {
		if r.expires <= now {
			expired = append(expired, id)
		}
	}
	slices.SortFunc(expired, func(a, b string) int {
		return cmp.Or(cmp.Compare(sp.records[a].expires, sp.records[b].expires), cmp.Compare(a, b))
	})
	for _, id := range expired[:min(len(expired), maxPurge)] {
		delete(sp.records, id)
		sp.log[id] = gen
	}
}

// trim keeps the newest [core.ControlLogLen] changes of the log, by
// generation then id, and records the newest generation it dropped.
func (sp *space) trim() {
	over := len(sp.log) - core.ControlLogLen
	if over <= 0 {
		return
	}
	type change struct {
		id  string
		gen uint64
	}
	all := make([]change, 0, len(sp.log))
	for id, g := range sp.log {
		all = append(all, change{id, g})
	}
	slices.SortFunc(all, func(a, b change) int { return cmp.Or(cmp.Compare(a.gen, b.gen), cmp.Compare(a.id, b.id)) })
	for _, ch := range all[:over] {
		delete(sp.log, ch.id)
	}
	sp.trimmed = max(sp.trimmed, all[over-1].gen)
}

// all returns every record live at now.
func (sp *space) all(now int64) []core.ControlEntry {
	var out []core.ControlEntry
	for id, r := range sp.records {
		if now < r.expires {
			out = append(out, r.entry(id))
		}
	}
	return out
}

// since returns the clients changed after generation since, with their
// records live at now.
func (sp *space) since(since uint64, now int64) []core.ControlEntry {
	var out []core.ControlEntry
	for id, g := range sp.log {
		if g <= since {
			continue
		}
		e := core.ControlEntry{ID: id}
		if r, ok := sp.records[id]; ok && now < r.expires {
			e = r.entry(id)
		}
		out = append(out, e)
	}
	return out
}

func (r record) entry(id string) core.ControlEntry {
	return core.ControlEntry{ID: id, Value: slices.Clone(r.value), Expires: keylayout.FromEpochMicros(r.expires)}
}

// expiryMicros returns the expiry of a record set at now (µs) until
// expires: at most [core.MaxControlAge] ahead, which the zero time means.
func expiryMicros(expires time.Time, now int64) int64 {
	limit := now + maxControlAge
	if expires.IsZero() {
		return limit
	}
	return min(keylayout.EpochMicros(expires), limit)
}

// checkControl rejects the arguments of a write that no store may accept:
// a space or id that cannot be part of a key, a value too long or empty.
func checkControl(ctx context.Context, space, id string, value []byte) error {
	if err := checkSpace(ctx, space); err != nil {
		return err
	}
	if err := keylayout.CheckID(id); err != nil {
		return fmt.Errorf("ratelimit: memstore: %w", err)
	}
	switch {
	case len(value) > core.MaxControlSize:
		return fmt.Errorf("ratelimit: memstore: control value of %q is %d bytes, more than %d", id, len(value), core.MaxControlSize)
	case value != nil && len(value) == 0:
		return fmt.Errorf("ratelimit: memstore: control value of %q is empty (nil deletes the record)", id)
	}
	return nil
}

func checkSpace(ctx context.Context, space string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ratelimit: memstore: %w", err)
	}
	if err := keylayout.CheckSpace(space); err != nil {
		return fmt.Errorf("ratelimit: memstore: %w", err)
	}
	return nil
}

func checkDeleteKeys(ctx context.Context, keys []string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ratelimit: memstore: %w", err)
	}
	if err := keylayout.CheckClientKeys(keys); err != nil {
		return fmt.Errorf("ratelimit: memstore: delete keys: %w", err)
	}
	return nil
}
