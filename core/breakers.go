package core

import (
	"sync"
	"time"
)

// maxShards bounds the breakers of a sharded store: a Redis Cluster has at
// most about a thousand masters. Past the bound, new shards share the
// unsharded breaker.
const maxShards = 1024

// breakers is the circuit breaker of a limiter: one [breaker] per shard of
// the store ([Capabilities].Shard), so that a dead Redis Cluster master fails fast
// only for the clients whose keys it holds, while the others keep being
// decided by their own masters. A store that is not sharded, or a key
// whose shard is unknown, uses the one unsharded breaker.
//
// The state a limiter reports ([Limiter.BreakerState], the observers'
// BreakerChanged) is the worst over the shards: open if any is open, else
// half-open if any is, else closed.
type breakers struct {
	cfg      BreakerConfig
	now      clockFunc
	onChange func(from, to BreakerState) // the limiter's, for the worst state

	unsharded *breaker

	// mu guards the fields below and the shards; a breaker's lock may be
	// held when mu is taken (its state changes are counted here), never the
	// other way round.
	mu        sync.Mutex
	shards    map[string]*shard
	count     [3]int // breakers (unsharded included) per state
	worst     BreakerState
	lastSweep time.Time
}

// A shard is the breaker of one part of a sharded store.
type shard struct {
	b        *breaker
	state    BreakerState // as counted in breakers.count
	lastUsed time.Time
	dropped  bool // no longer counted
}

func newBreakers(cfg BreakerConfig, now clockFunc, onChange func(from, to BreakerState)) *breakers {
	bs := &breakers{cfg: cfg, now: now, onChange: onChange, shards: map[string]*shard{}}
	bs.unsharded = bs.newShard().b
	return bs
}

// newShard returns a closed breaker, counted; bs.mu is held or bs is new.
func (bs *breakers) newShard() *shard {
	s := &shard{}
	s.b = &breaker{cfg: bs.cfg, now: bs.now, onChange: func(from, to BreakerState) { bs.changed(s, to) }}
	bs.count[BreakerClosed]++
	return s
}

// forShard returns the breaker of the named shard ("" is the unsharded
// one). Breakers of shards no call asked for in the last 2 × OpenFor are
// dropped, at most once per OpenFor: after a failover the old master serves
// no key, and its open breaker must not keep the limiter's state open.
func (bs *breakers) forShard(name string) *breaker {
	if name == "" {
		return bs.unsharded
	}
	now := bs.now()
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if now.Sub(bs.lastSweep) >= bs.cfg.OpenFor {
		bs.sweep(now)
	}
	s := bs.shards[name]
	if s == nil {
		if len(bs.shards) >= maxShards {
			return bs.unsharded
		}
		s = bs.newShard()
		bs.shards[name] = s
	}
	s.lastUsed = now
	return s.b
}

// sweep drops the breakers of idle shards; bs.mu is held.
func (bs *breakers) sweep(now time.Time) {
	bs.lastSweep = now
	for name, s := range bs.shards {
		if now.Sub(s.lastUsed) < 2*bs.cfg.OpenFor {
			continue
		}
		// A call may still hold the breaker: its later changes are
		// ignored (changed).
		delete(bs.shards, name)
		s.dropped = true
		bs.count[s.state]--
		bs.report()
	}
}

// changed counts a state change of the breaker of s; that breaker's lock
// is held.
func (bs *breakers) changed(s *shard, to BreakerState) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if s.dropped {
		return
	}
	bs.count[s.state]--
	bs.count[to]++
	s.state = to
	bs.report()
}

// report tells the limiter when the worst state changed; bs.mu is held.
func (bs *breakers) report() {
	worst := BreakerClosed
	if bs.count[BreakerOpen] > 0 {
		worst = BreakerOpen
	} else if bs.count[BreakerHalfOpen] > 0 {
		worst = BreakerHalfOpen
	}
	if worst == bs.worst {
		return
	}
	from := bs.worst
	bs.worst = worst
	if bs.onChange != nil {
		bs.onChange(from, worst)
	}
}

// current returns the worst state over the shards.
func (bs *breakers) current() BreakerState {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.worst
}
