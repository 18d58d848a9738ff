package redisstore

import (
	"context"
	"sync/atomic"
	"time"
)

// reloadEvery is how often, at most, a [Store] asks a cluster client to
// reload its slot map while takes fail: often enough that a promoted replica
// is found within a fraction of a second, rarely enough that a flood of
// failing takes costs Redis nothing (go-redis coalesces reloads too).
const reloadEvery = 100 * time.Millisecond

// A stateReloader is a client whose view of the cluster can be refreshed on
// demand: *redis.ClusterClient (ReloadState starts a reload in the
// background and returns).
type stateReloader interface {
	ReloadState(ctx context.Context)
}

// A reloader refreshes a cluster client's slot map after failed takes, at
// most once per every. go-redis refreshes it only on MOVED replies and every
// ClusterStateReloadInterval (60 s by default), so without this a client
// keeps sending a dead master's slots to the dead master long after its
// replica took over: a take that fails to connect gets no MOVED.
type reloader struct {
	client stateReloader
	every  time.Duration
	now    func() time.Time // monotonic
	base   time.Time
	next   atomic.Int64 // time since base before which no reload is asked
}

func newReloader(client stateReloader, every time.Duration, now func() time.Time) *reloader {
	return &reloader{client: client, every: every, now: now, base: now()}
}

// failed records a take that failed because the store was unavailable, and
// asks for a reload unless one was asked less than r.every ago.
func (r *reloader) failed(ctx context.Context) {
	now := int64(r.now().Sub(r.base))
	next := r.next.Load()
	if now < next || !r.next.CompareAndSwap(next, now+int64(r.every)) {
		return
	}
	r.client.ReloadState(ctx)
}
