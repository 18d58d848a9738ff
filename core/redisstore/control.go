package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

var _ core.ControlStore = (*Store)(nil)

// controlParts are the parts of the control keys, in the order of the
// KEYS of the program "control".
var controlParts = [...]string{
	keylayout.ControlRecords, keylayout.ControlExpiries, keylayout.ControlLog,
	keylayout.ControlGeneration, keylayout.ControlTrimmed,
}

// controlKeys returns the keys of the controls of space: P:{~ctl}:r, e, l,
// g and t, in one Cluster slot.
func controlKeys(space string) []string {
	keys := make([]string, len(controlParts))
	for i, part := range controlParts {
		keys[i] = keylayout.ControlKey(space, part)
	}
	return keys
}

// SetControl implements [core.ControlStore]: one call of the program
// "control" (scripts/control.lua) that stores value as the record of id
// in space until expires, by the Redis clock (the test clock of
// [WithClock]), or deletes it when value is nil, purges expired records
// and logs the changes under a new generation. Errors are wrapped as
// "ratelimit: redis controls: ..." and, like Take's, wrap
// [core.ErrStoreUnavailable] when Redis cannot answer now; any other is a
// bug or misconfiguration.
func (s *Store) SetControl(ctx context.Context, space, id string, value []byte, expires time.Time) (uint64, error) {
	if err := checkControl(space, id, value); err != nil {
		return 0, fmt.Errorf("ratelimit: redis controls: %w", err)
	}
	if value == nil {
		return s.controlWrite(ctx, space, "delete", id)
	}
	var at any = "" // none: the program's longest, MaxControlAge
	if !expires.IsZero() {
		at = keylayout.EpochMicros(expires)
	}
	return s.controlWrite(ctx, space, "set", id, value, at)
}

// TouchControl implements [core.ControlStore]: one call of "control" that
// logs a change of id under a new generation (and purges).
func (s *Store) TouchControl(ctx context.Context, space, id string) (uint64, error) {
	if err := checkControl(space, id, nil); err != nil {
		return 0, fmt.Errorf("ratelimit: redis controls: %w", err)
	}
	return s.controlWrite(ctx, space, "touch", id)
}

// Controls implements [core.ControlStore]: one call of "control" that
// writes nothing. When nothing changed since, its reply is three integers.
func (s *Store) Controls(ctx context.Context, space string, since uint64) (core.ControlChanges, error) {
	if err := keylayout.CheckSpace(space); err != nil {
		return core.ControlChanges{}, fmt.Errorf("ratelimit: redis controls: %w", err)
	}
	reply, err := s.controlCall(ctx, space, "read", since)
	if err != nil {
		return core.ControlChanges{}, fmt.Errorf("ratelimit: redis controls: %w", err)
	}
	ch, err := parseChanges(reply)
	if err != nil {
		return core.ControlChanges{}, fmt.Errorf("ratelimit: redis controls: %w", err)
	}
	return ch, nil
}

// DeleteKeys implements [core.ControlStore]: one DEL of keys, which share
// one client's hash tag, so one slot on a Cluster. It returns how many
// keys existed. Errors are wrapped as "ratelimit: redis delete keys: ..."
// and classified as Take's.
func (s *Store) DeleteKeys(ctx context.Context, keys []string) (int64, error) {
	if err := keylayout.CheckClientKeys(keys); err != nil {
		return 0, fmt.Errorf("ratelimit: redis delete keys: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("ratelimit: redis delete keys: %w", classify(notSent(err)))
	}
	if len(keys) == 0 {
		return 0, nil
	}
	proc, ok := s.client.(processor)
	if !ok {
		return 0, fmt.Errorf("ratelimit: redis delete keys: client %T cannot send DEL: want a go-redis client", s.client)
	}
	args := make([]any, 0, 1+len(keys))
	args = append(args, "del")
	for _, k := range keys {
		args = append(args, k)
	}
	cmd := redis.NewIntCmd(ctx, args...)
	_ = proc.Process(ctx, cmd)
	n, err := cmd.Result()
	if err != nil {
		return 0, fmt.Errorf("ratelimit: redis delete keys: %w", s.failed(ctx, err))
	}
	return n, nil
}

// controlWrite runs a write of "control" and returns the new generation.
func (s *Store) controlWrite(ctx context.Context, space string, args ...any) (uint64, error) {
	reply, err := s.controlCall(ctx, space, args...)
	if err != nil {
		return 0, fmt.Errorf("ratelimit: redis controls: %w", err)
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 1 {
		return 0, fmt.Errorf("ratelimit: redis controls: control script replied %v, want one generation", reply)
	}
	gen, ok := r[0].(int64)
	if !ok || gen < 0 {
		return 0, fmt.Errorf("ratelimit: redis controls: control script replied generation %v", r[0])
	}
	return uint64(gen), nil
}

// controlCall runs the program "control" on the keys of space, with the
// test clock's now (or "", the server's TIME) before args: EVALSHA, and
// EVAL when the server answers NOSCRIPT.
func (s *Store) controlCall(ctx context.Context, space string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, classify(notSent(err))
	}
	var now any = ""
	if s.now != nil {
		now = keylayout.EpochMicros(s.now())
	}
	argv := append([]any{now}, args...)
	reply, err := s.progs.control.script.Run(ctx, s.client, controlKeys(space), argv...).Result()
	if err != nil {
		return nil, s.failed(ctx, err)
	}
	return reply, nil
}

// failed classifies err, the error of a call to Redis, as [classify] does
// for a take, and on a cluster client asks for a reload of the slot map
// when Redis is unavailable.
func (s *Store) failed(ctx context.Context, err error) error {
	err = classify(err)
	if s.reload != nil && errors.Is(err, core.ErrStoreUnavailable) {
		s.reload.failed(ctx)
	}
	return err
}

// parseChanges reads the reply of a read of "control": gen, now, full,
// then id, expiry and record per client.
func parseChanges(reply any) (core.ControlChanges, error) {
	r, ok := reply.([]any)
	if !ok || len(r) < 3 || (len(r)-3)%3 != 0 {
		return core.ControlChanges{}, fmt.Errorf("control script replied %d values, want 3 + 3 per client", len(r))
	}
	var head [3]int64
	for i := range head {
		if head[i], ok = r[i].(int64); !ok {
			return core.ControlChanges{}, fmt.Errorf("control script replied %v at %d, want an integer", r[i], i)
		}
	}
	ch := core.ControlChanges{Gen: uint64(max(head[0], 0)), Now: keylayout.FromEpochMicros(head[1]), Full: head[2] == 1}
	for i := 3; i < len(r); i += 3 {
		e, err := parseEntry(r[i : i+3])
		if err != nil {
			return core.ControlChanges{}, err
		}
		ch.Records = append(ch.Records, e)
	}
	return ch, nil
}

// parseEntry reads one client of a read: id, expiry (µs), record or nil.
func parseEntry(v []any) (core.ControlEntry, error) {
	id, okID := v[0].(string)
	expiry, okExp := v[1].(int64)
	if !okID || !okExp {
		return core.ControlEntry{}, fmt.Errorf("control script replied client %v, expiry %v", v[0], v[1])
	}
	e := core.ControlEntry{ID: id}
	switch rec := v[2].(type) {
	case nil:
	case string:
		e.Value, e.Expires = []byte(rec), keylayout.FromEpochMicros(expiry)
	default:
		return core.ControlEntry{}, fmt.Errorf("control script replied record %v of client %q", rec, id)
	}
	return e, nil
}

// checkControl rejects the arguments of a write that no store may accept:
// a space or id that cannot be part of a key, a value too long or empty.
func checkControl(space, id string, value []byte) error {
	if err := keylayout.CheckSpace(space); err != nil {
		return err
	}
	if err := keylayout.CheckID(id); err != nil {
		return err
	}
	switch {
	case len(value) > core.MaxControlSize:
		return fmt.Errorf("control value of %q is %d bytes, more than %d", id, len(value), core.MaxControlSize)
	case value != nil && len(value) == 0:
		return fmt.Errorf("control value of %q is empty (nil deletes the record)", id)
	}
	return nil
}
