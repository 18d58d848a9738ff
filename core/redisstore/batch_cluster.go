package redisstore

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// maxMasters bounds how many masters a batching store on a cluster client
// keeps a queue for: more than a Redis Cluster has (about 1000 nodes at
// most). A take of any other master is sent alone, as without batching.
const maxMasters = 1024

// masterBatchers are the queues of a cluster client's masters
// ([WithoutBatching]): a take goes to the queue of the master its key's slot
// maps to in the client's slot map ([redis.ClusterClient.MasterForKey],
// read from memory), whose pipelines go on that master's node client. A
// lone take, and a take the node answered MOVED or ASK, goes through the
// cluster client, as without batching.
//
// The queues are a copy-on-write map by node client, so a take reads it
// with one atomic load. A master seen for the first time (a new slot map:
// a failover, a resharding) or a MOVED reply drops the idle queues of
// nodes that no longer serve the key they were found by: a dead master
// whose replica took over, a node that left the cluster. Such a queue that
// still has takes in flight is dropped by a take after they ended.
type masterBatchers struct {
	cluster *redis.ClusterClient
	alone   bool // tests: see [nodeBatcher]
	asked   bool // [WithBatching]: log a master that cannot batch
	logger  *slog.Logger

	queues atomic.Pointer[map[*redis.Client]masterQueue]
	stale  atomic.Bool // queues holds a queue to drop once idle
	mu     sync.Mutex  // held to replace queues
}

// A masterQueue is the queue of one master, and the key whose slot found
// it (to tell when the master no longer serves it). A nil batcher means
// the node client retries: its takes are sent alone.
type masterQueue struct {
	batcher *nodeBatcher
	key     string
}

// newMasterBatchers returns the (no) queues of a batching store on
// cluster; a queue is added when a take first meets its master.
func newMasterBatchers(cluster *redis.ClusterClient, c config) *masterBatchers {
	m := &masterBatchers{cluster: cluster, alone: c.batchAlone, asked: c.batchOn, logger: c.logger}
	m.queues.Store(&map[*redis.Client]masterQueue{})
	return m
}

// do runs one take, cmd, through the queue of its key's master.
func (m *masterBatchers) do(ctx context.Context, p *program, cmd *redis.IntSliceCmd) ([]int64, error) {
	key := firstKey(cmd)
	master, err := m.cluster.MasterForKey(ctx, key)
	if err != nil {
		// The slot map could not be loaded: the cluster client would
		// fail alike.
		return nil, err
	}
	if m.stale.Load() {
		m.prune(ctx)
	}
	q, ok := (*m.queues.Load())[master]
	if !ok {
		q = m.add(ctx, master, key)
	}
	if q.batcher == nil {
		return runAlone(ctx, m.cluster, p, cmd)
	}
	return q.batcher.do(ctx, p, cmd)
}

// add returns the queue of master, found by key, adding it unless there
// are maxMasters already; a master not seen before means a new slot map,
// so it first drops the queues left behind.
func (m *masterBatchers) add(ctx context.Context, master *redis.Client, key string) masterQueue {
	m.mu.Lock()
	defer m.mu.Unlock()
	queues := *m.queues.Load()
	if q, ok := queues[master]; ok {
		return q
	}
	next := m.pruned(ctx, queues)
	if len(next) >= maxMasters {
		return masterQueue{}
	}
	q := masterQueue{key: key}
	if !retries(config{logger: m.logger, batchOn: m.asked}, master) {
		q.batcher = newNodeBatcher(master, m.cluster, m.alone)
		q.batcher.redirected = m.prune
	}
	next[master] = q
	m.queues.Store(&next)
	return q
}

// prune drops the queues left behind, unless another take is doing so: it
// runs after a take was answered MOVED or ASK (a slot moved), and while a
// queue left behind was busy.
func (m *masterBatchers) prune(ctx context.Context) {
	if !m.mu.TryLock() {
		return
	}
	defer m.mu.Unlock()
	queues := *m.queues.Load()
	if next := m.pruned(ctx, queues); len(next) < len(queues) {
		m.queues.Store(&next)
	}
}

// pruned returns a copy of queues without the idle queues of nodes that do
// not serve their key now, and sets stale if it kept a busy one: its takes
// finish on it either way, and a later take drops it. m.mu is held.
func (m *masterBatchers) pruned(ctx context.Context, queues map[*redis.Client]masterQueue) map[*redis.Client]masterQueue {
	next := make(map[*redis.Client]masterQueue, len(queues)+1)
	stale := false
	for node, q := range queues {
		if master, err := m.cluster.MasterForKey(ctx, q.key); err != nil || master != node {
			if q.batcher == nil || q.batcher.idle() {
				continue
			}
			stale = true
		}
		next[node] = q
	}
	m.stale.Store(stale)
	return next
}
