package memstore

import (
	"strings"
	"sync"

	"github.com/ratelimitkit/ratelimit/internal/keylayout"
)

// evictionSample is how many entries a full shard looks at to make room,
// as Redis samples keys for its approximated LRU.
const evictionSample = 8

// A shard is a part of the store with its own lock and its own share of
// the key cap.
type shard struct {
	mu      sync.Mutex
	entries map[string]*entry
	maxKeys int
	_       [64]byte // keeps neighbouring shards' locks off one cache line
}

// insert returns the entry of key, creating it (and making room for it)
// if there is none. Entries held by the take in progress are evicted only
// when nothing else can be.
func (sh *shard) insert(key string, now int64, held []slot) *entry {
	if e := sh.entries[key]; e != nil {
		return e
	}
	if len(sh.entries) >= sh.maxKeys {
		sh.makeRoom(now, held)
	}
	e := &entry{}
	sh.entries[strings.Clone(key)] = e // a NonBlocking store's keys live only for the call
	return e
}

// makeRoom removes the expired entries among a random sample of the shard
// or, if there are none, the sampled entry closest to expiry, preferring
// entries that the take in progress does not hold.
func (sh *shard) makeRoom(now int64, held []slot) {
	var victim, fallback string
	var victimAt int64
	removed, found, seen := false, false, 0
	for key, e := range sh.entries { // map iteration starts at a random place
		switch {
		case isHeld(e, held): // also when expired: the take in progress reuses it
			fallback = key
		case e.expired(now):
			delete(sh.entries, key)
			removed = true
		case !found || e.expireAt < victimAt:
			victim, victimAt, found = key, e.expireAt, true
		}
		if seen++; seen == evictionSample {
			break
		}
	}
	switch {
	case removed:
	case found:
		delete(sh.entries, victim)
	default:
		delete(sh.entries, fallback)
	}
}

func isHeld(e *entry, held []slot) bool {
	for i := range held {
		if held[i].e == e {
			return true
		}
	}
	return false
}

// hashTag returns the part of key that picks its shard: the bytes between
// the first '{' and the next '}' when they are not empty, else the whole
// key, as Redis Cluster picks a slot.
func hashTag(key string) string {
	start, end := keylayout.TagBounds(key)
	return key[start:end]
}
