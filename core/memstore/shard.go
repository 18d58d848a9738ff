package memstore

import (
	"strings"
	"sync"
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
	start, end := tagBounds(key)
	return key[start:end]
}

// tagBounds returns where the hash tag of key starts and ends (key[start:end],
// key[end] being the closing '}'), or 0 and len(key) when key has no tag.
// It is a plain loop: the tag of a key of ours starts a few bytes in, and
// two calls of strings.IndexByte cost more than the bytes they skip.
func tagBounds(key string) (start, end int) {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 { // "{}": no tag
					break
				}
				return i + 1, j
			}
		}
		break
	}
	return 0, len(key)
}
