package core_test

// This file is test scaffolding: an in-process core.ControlStore over the
// memory store, with the semantics of the contract (a generation per
// space, a change log trimmed to its newest entries, expiry by the
// store's clock), for the tests of the limiter's side of controls while
// memstore keeps none. Delete it once memstore implements
// core.ControlStore, and make newControlStore (controlstore_test.go)
// return a memstore: nothing else uses it.

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
)

// fakeControlStore is a memory store that keeps controls. Keys it deleted
// are renamed on later takes (key#n), so a deleted client starts afresh.
type fakeControlStore struct {
	*memstore.Store
	now    func() time.Time
	maxLog int // the change log keeps this many entries; 0: 4096

	mu     sync.Mutex
	spaces map[string]*fakeSpace
	epochs map[string]int  // key -> deletions so far
	live   map[string]bool // key -> taken since its last deletion
}

type fakeSpace struct {
	gen     uint64
	trimmed uint64
	records map[string]core.ControlEntry
	log     map[string]uint64 // id -> generation of its last change
}

var (
	_ core.ControlStore = (*fakeControlStore)(nil)
	_ core.Leaser       = (*fakeControlStore)(nil)
)

func newFakeControlStore(t testing.TB, now func() time.Time) *fakeControlStore {
	t.Helper()
	mem, err := memstore.New(memstore.WithClock(now))
	require.NoError(t, err)
	return &fakeControlStore{Store: mem, now: now, spaces: map[string]*fakeSpace{}, epochs: map[string]int{}, live: map[string]bool{}}
}

func (s *fakeControlStore) space(name string) *fakeSpace {
	sp := s.spaces[name]
	if sp == nil {
		sp = &fakeSpace{records: map[string]core.ControlEntry{}, log: map[string]uint64{}}
		s.spaces[name] = sp
	}
	return sp
}

// write logs a change of id, after purging what expired; s.mu is held.
func (s *fakeControlStore) write(sp *fakeSpace, id string, now time.Time) uint64 {
	for rid, e := range sp.records {
		if !now.Before(e.Expires) {
			delete(sp.records, rid)
			sp.gen++
			sp.log[rid] = sp.gen
		}
	}
	sp.gen++
	sp.log[id] = sp.gen
	maxLog := s.maxLog
	if maxLog == 0 {
		maxLog = 4096
	}
	for len(sp.log) > maxLog {
		oldest := slices.MinFunc(slices.Collect(maps.Keys(sp.log)), func(a, b string) int { return int(sp.log[a]) - int(sp.log[b]) })
		sp.trimmed = max(sp.trimmed, sp.log[oldest])
		delete(sp.log, oldest)
	}
	return sp.gen
}

func (s *fakeControlStore) SetControl(_ context.Context, space, id string, value []byte, expires time.Time) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	sp := s.space(space)
	if expires.IsZero() {
		expires = now.Add(core.MaxControlAge)
	}
	if value == nil {
		delete(sp.records, id)
	} else {
		sp.records[id] = core.ControlEntry{ID: id, Value: slices.Clone(value), Expires: expires}
	}
	return s.write(sp, id, now), nil
}

func (s *fakeControlStore) TouchControl(_ context.Context, space, id string) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(s.space(space), id, s.now()), nil
}

func (s *fakeControlStore) Controls(_ context.Context, space string, since uint64) (core.ControlChanges, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	sp := s.space(space)
	ch := core.ControlChanges{Gen: sp.gen, Now: now}
	ch.Full = since == 0 || since < sp.trimmed || sp.gen < since
	if ch.Full {
		for _, e := range sp.records {
			if now.Before(e.Expires) {
				ch.Records = append(ch.Records, e)
			}
		}
		return ch, nil
	}
	for id, g := range sp.log {
		if g <= since {
			continue
		}
		e, ok := sp.records[id]
		if !ok || !now.Before(e.Expires) {
			e = core.ControlEntry{ID: id}
		}
		ch.Records = append(ch.Records, e)
	}
	return ch, nil
}

func (s *fakeControlStore) DeleteKeys(_ context.Context, keys []string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, k := range keys {
		if s.live[k] {
			n++
		}
		delete(s.live, k)
		s.epochs[k]++
	}
	return n, nil
}

// renamed returns keys as the memory store keeps them now; s.mu is held.
func (s *fakeControlStore) renamed(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k
		if n := s.epochs[k]; n > 0 {
			out[i] = k + "#" + strconv.Itoa(n)
		}
	}
	return out
}

func (s *fakeControlStore) keysOf(keys []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renamed(keys)
}

// charged marks keys live after a take of cost that ds admitted: the
// takes that write state.
func (s *fakeControlStore) charged(keys []string, cost int64, ds []core.Decision) {
	for _, d := range ds {
		if !d.Allowed {
			return
		}
	}
	if cost == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		s.live[strings.Clone(k)] = true
	}
}

func (s *fakeControlStore) Take(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64) ([]core.Decision, error) {
	n := len(dst)
	ds, err := s.Store.Take(ctx, dst, s.keysOf(keys), limits, cost)
	if err == nil {
		s.charged(keys, cost, ds[n:])
	}
	return ds, err
}

func (s *fakeControlStore) TakeLease(ctx context.Context, dst []core.Decision, keys []string, limits []core.Limit, cost int64, lease string) ([]core.Decision, error) {
	n := len(dst)
	ds, err := s.Store.TakeLease(ctx, dst, s.keysOf(keys), limits, cost, lease)
	if err == nil {
		s.charged(keys, cost, ds[n:])
	}
	return ds, err
}

func (s *fakeControlStore) Release(ctx context.Context, key string, l core.Limit, lease string) error {
	return s.Store.Release(ctx, s.keysOf([]string{key})[0], l, lease)
}

func (s *fakeControlStore) Renew(ctx context.Context, key string, l core.Limit, lease string) (bool, error) {
	return s.Store.Renew(ctx, s.keysOf([]string{key})[0], l, lease)
}
