package core

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// MaxPendingReleases is how many lease releases a [Limiter] keeps to send
// again when the store could not answer them ([Limiter.Release]). Past it,
// the oldest kept release is dropped: its lease expires by its TTL. Each
// release kept holds a key, a lease id and a [Limit]: about 200 bytes.
const MaxPendingReleases = 10_000

// replayBatch is how many kept releases one call that reached the store
// sends again, at most. They go on the caller's path, under one limiter
// timeout: after an outage, the first calls pay a few round trips each
// until every kept release is sent.
const replayBatch = 16

// A pendingRelease is a release of a lease the store could not answer.
type pendingRelease struct {
	store Leaser
	key   string
	limit Limit // the Concurrency limit of key
	lease string
	until time.Time // the lease has expired by then: nothing left to send
}

// pendingReleases is the bounded queue of releases to send again, safe for
// concurrent use. Its zero value is empty.
type pendingReleases struct {
	n  atomic.Int64 // len(q), read without the lock on every store call
	mu sync.Mutex
	q  []pendingRelease
}

// add keeps r until r.until, when its lease has expired anyway.
func (p *pendingReleases) add(r pendingRelease) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q) >= MaxPendingReleases {
		p.q[0] = pendingRelease{}
		p.q = p.q[1:]
	}
	p.q = append(p.q, r)
	p.n.Store(int64(len(p.q)))
}

// putBack keeps rs again, releases taken out with take whose store still
// could not answer, those whose lease has not expired by now.
func (p *pendingReleases) putBack(rs []pendingRelease, now time.Time) {
	for _, r := range rs {
		if now.Before(r.until) {
			p.add(r)
		}
	}
}

// take removes and returns up to n releases of keys whose shard is shard
// (by shardOf), dropping those whose lease has expired by now.
func (p *pendingReleases) take(n int, now time.Time, shard string, shardOf func(string) string) []pendingRelease {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []pendingRelease
	kept := p.q[:0]
	for _, r := range p.q {
		switch {
		case !now.Before(r.until):
		case len(out) < n && shardOf(r.key) == shard:
			out = append(out, r)
		default:
			kept = append(kept, r)
		}
	}
	clear(p.q[len(kept):])
	p.q = kept
	p.n.Store(int64(len(p.q)))
	return out
}

// replay sends again the kept releases of the shard of key, a key the
// store just answered for, up to replayBatch of them; it keeps those the
// store still cannot answer.
func (l *Limiter) replay(ctx context.Context, key string) {
	if l.pending.n.Load() == 0 {
		return
	}
	now := l.now()
	rs := l.pending.take(replayBatch, now, l.shardOf(key), l.shardOf)
	if len(rs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
	defer cancel()
	for i, r := range rs {
		err := r.store.Release(ctx, r.key, r.limit, r.lease)
		if err != nil && (errors.Is(err, ErrStoreUnavailable) || ctx.Err() != nil) {
			l.pending.putBack(rs[i:], now)
			return
		}
	}
}

// shardOf names the store shard that holds key ([Capabilities].Shard), or
// "".
func (l *Limiter) shardOf(key string) string {
	if l.shard != nil {
		return l.shard(key)
	}
	return ""
}
