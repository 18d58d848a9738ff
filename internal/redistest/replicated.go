package redistest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterNodeTimeout is the cluster-node-timeout of a [ReplicatedCluster]:
// how long a master may not answer before the others flag it as failing.
// Low, so failovers take about two seconds; not so low that a loaded CI
// machine triggers failovers nobody asked for.
const ClusterNodeTimeout = time.Second

// replicatedFlags configure the nodes of a [ReplicatedCluster]:
//   - cluster-replica-validity-factor 0: a replica always may take over,
//     however long it was cut off;
//   - cluster-require-full-coverage no: while one master is down, the
//     others keep serving their slots (the setting we recommend for rate
//     limiting, see docs/operations.md);
//   - cluster-allow-replica-migration no: replicas stay where they are put;
//   - repl-diskless-sync-delay 0: replicas sync at once, not after 5 s.
var replicatedFlags = []string{
	"--cluster-node-timeout", strconv.Itoa(int(ClusterNodeTimeout / time.Millisecond)),
	"--cluster-replica-validity-factor", "0",
	"--cluster-require-full-coverage", "no",
	"--cluster-allow-replica-migration", "no",
	"--repl-diskless-sync", "yes",
	"--repl-diskless-sync-delay", "0",
}

// A HACluster is a Redis Cluster of three masters, each with one replica,
// started for one test by [ReplicatedCluster], so the test may kill nodes
// and fail them over.
type HACluster struct {
	nodes []*process // masters first, then their replicas in the same order
}

// ReplicatedCluster starts a six-node Redis Cluster (three masters, one
// replica each, [ClusterNodeTimeout]) for t alone, and stops it when t
// ends. It fails t when the cluster cannot be started and skips t under
// go test -short. Starting takes a few seconds.
func ReplicatedCluster(t testing.TB) *HACluster {
	t.Helper()
	skipShort(t)
	if !mainRunning() {
		t.Fatal(errNoMain)
	}
	nodes, err := startNodes(6, replicatedFlags...)
	for _, n := range nodes {
		if n != nil {
			t.Cleanup(n.stop)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := formReplicated(nodes); err != nil {
		t.Fatal(err)
	}
	return &HACluster{nodes: nodes}
}

// formReplicated forms a cluster of the first three nodes, then makes each
// of the last three the replica of one of them, and waits until every node
// sees three masters with three connected replicas.
func formReplicated(nodes []*process) error {
	masters, replicas := nodes[:3], nodes[3:]
	if err := formCluster(masters); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	clients := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: n.addr, PoolSize: 1})
		defer clients[i].Close()
	}
	for _, n := range replicas {
		host, port, _ := net.SplitHostPort(n.addr)
		if err := clients[0].Do(ctx, "CLUSTER", "MEET", host, port, n.busPort).Err(); err != nil {
			return fmt.Errorf("redistest: cluster meet %s: %w", n.addr, err)
		}
	}
	if err := waitClusterOK(ctx, nodes, clients); err != nil {
		return err
	}
	for i, r := range replicas {
		id, err := clients[i].ClusterMyID(ctx).Result()
		if err != nil {
			return fmt.Errorf("redistest: cluster myid on %s: %w", masters[i].addr, err)
		}
		if err := clients[3+i].Do(ctx, "CLUSTER", "REPLICATE", id).Err(); err != nil {
			return fmt.Errorf("redistest: cluster replicate on %s: %w", r.addr, err)
		}
	}
	return waitReplicated(ctx, nodes, clients)
}

// waitReplicated polls until each replica reports a connected master link
// and every node lists three masters and three replicas.
func waitReplicated(ctx context.Context, nodes []*process, clients []*redis.Client) error {
	for i, c := range clients {
		var last string
		for !replicatedView(last, i >= 3) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("redistest: replicated cluster node %s not ready after %s; last view:\n%s\n%s",
					nodes[i].addr, readyTimeout, last, nodes[i].logTail())
			case <-time.After(pollInterval):
			}
			nodesText, _ := c.ClusterNodes(ctx).Result()
			info, _ := c.Info(ctx, "replication").Result()
			last = nodesText + info
		}
	}
	return nil
}

// replicatedView reports whether CLUSTER NODES followed by INFO
// replication show three masters and three replicas, and, for a replica,
// an established link to its master.
func replicatedView(view string, replica bool) bool {
	masters, replicas := 0, 0
	for _, line := range strings.Split(view, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 {
			continue
		}
		switch flags := fields[2]; {
		case strings.Contains(flags, "fail"):
		case strings.Contains(flags, "master"):
			masters++
		case strings.Contains(flags, "slave"):
			replicas++
		}
	}
	linked := !replica || strings.Contains(view, "master_link_status:up")
	return masters == 3 && replicas == 3 && linked
}

// Addrs returns the host:port of every node, masters first.
func (c *HACluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.addr
	}
	return addrs
}

// Options returns fresh cluster client options seeded with every node, to
// be adjusted before [redis.NewClusterClient].
func (c *HACluster) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: c.Addrs()}
}

// Client returns a new cluster client, closed when t ends.
func (c *HACluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(c.Options())
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// A Shard is a master and its replica, by host:port.
type Shard struct {
	Master, Replica string
}

// Shards returns, for each key, the master that serves its slot now and
// the master's replica, as the node at via sees them (from CLUSTER NODES:
// CLUSTER SLOTS leaves out replicas that have not replicated a write yet).
func (c *HACluster) Shards(t testing.TB, via string, keys ...string) []Shard {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: via, PoolSize: 1})
	defer client.Close()
	view, err := client.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatalf("redistest: cluster nodes: %v", err)
	}
	shards := make([]Shard, len(keys))
	for i, key := range keys {
		slot, err := client.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			t.Fatalf("redistest: cluster keyslot: %v", err)
		}
		shards[i].Master, shards[i].Replica = shardOf(view, slot)
		if shards[i].Master == "" || shards[i].Replica == "" {
			t.Fatalf("redistest: no master with a replica serves slot %d:\n%s", slot, view)
		}
	}
	return shards
}

// shardOf finds, in a CLUSTER NODES text, the address of the master that
// serves slot and of a replica of it.
func shardOf(view string, slot int64) (master, replica string) {
	var id string
	lines := strings.Split(view, "\n")
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			l, errLo := strconv.ParseInt(lo, 10, 64)
			h, errHi := strconv.ParseInt(hi, 10, 64)
			if errLo == nil && errHi == nil && l <= slot && slot <= h {
				id, master = f[0], nodeAddr(f[1])
			}
		}
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if id != "" && len(f) >= 4 && f[3] == id && !strings.Contains(f[2], "fail") {
			replica = nodeAddr(f[1])
		}
	}
	return master, replica
}

// nodeAddr turns the address field of CLUSTER NODES ("ip:port@bus,host")
// into host:port.
func nodeAddr(field string) string {
	addr, _, _ := strings.Cut(field, "@")
	return addr
}

// Kill kills the node at addr (SIGKILL) and waits until it is gone.
func (c *HACluster) Kill(t testing.TB, addr string) {
	t.Helper()
	c.node(t, addr).kill()
}

// Role returns the role the node at addr reports (ROLE): "master",
// "slave", or the error's text when it does not answer within timeout.
func (c *HACluster) Role(addr string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1})
	defer client.Close()
	role, err := client.Do(ctx, "ROLE").Slice()
	if err != nil {
		return err.Error()
	}
	if len(role) == 0 {
		return ""
	}
	s, _ := role[0].(string)
	return s
}

// Failover runs CLUSTER FAILOVER on the replica at addr (a manual failover
// without data loss: its master stops writes until the replica caught up)
// and waits until the replica reports itself master.
func (c *HACluster) Failover(t testing.TB, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer client.Close()
	if err := client.Do(ctx, "CLUSTER", "FAILOVER").Err(); err != nil {
		t.Fatalf("redistest: cluster failover on %s: %v", addr, err)
	}
	for c.Role(addr, time.Second) != "master" {
		select {
		case <-ctx.Done():
			t.Fatalf("redistest: %s not master %s after CLUSTER FAILOVER", addr, readyTimeout)
		case <-time.After(pollInterval):
		}
	}
}

func (c *HACluster) node(t testing.TB, addr string) *process {
	t.Helper()
	for _, n := range c.nodes {
		if n.addr == addr {
			return n
		}
	}
	t.Fatalf("redistest: no node %s in the cluster", addr)
	return nil
}
