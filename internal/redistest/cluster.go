package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// A ClusterServer is a Redis Cluster under test: three masters without
// replicas that this package started, or the cluster REDIS_CLUSTER_ADDRS
// names. Each [ClusterServer.Client] is an independent cluster client (an
// app node).
type ClusterServer struct {
	addrs   []string
	started bool
}

// sharedCluster is the cluster of this test binary.
var sharedCluster struct {
	once sync.Once
	srv  *ClusterServer
	err  error
}

// Cluster returns the three-master Redis Cluster shared by the tests of this
// binary, starting it on first use ([Main] stops it). When
// REDIS_CLUSTER_ADDRS is set it returns that cluster instead. It fails t
// when no cluster can be had and skips t under go test -short.
//
// Starting takes about two seconds: a Redis master waits that long after
// startup before it declares the cluster usable.
func Cluster(t testing.TB) *ClusterServer {
	t.Helper()
	skipShort(t)
	sharedCluster.once.Do(func() { sharedCluster.srv, sharedCluster.err = openCluster() })
	if sharedCluster.err != nil {
		t.Fatal(sharedCluster.err)
	}
	return sharedCluster.srv
}

func openCluster() (*ClusterServer, error) {
	if seeds := os.Getenv("REDIS_CLUSTER_ADDRS"); seeds != "" {
		return &ClusterServer{addrs: strings.Split(seeds, ",")}, nil
	}
	if !mainRunning() {
		return nil, errNoMain
	}
	nodes, err := startNodes(3)
	if err != nil {
		return nil, err
	}
	if err := formCluster(nodes); err != nil {
		return nil, err
	}
	c := &ClusterServer{started: true}
	for _, n := range nodes {
		c.addrs = append(c.addrs, n.addr)
	}
	return c, nil
}

// DedicatedCluster starts a three-master Redis Cluster without replicas
// for t alone, its servers run with the extra redis-server flags
// ("--cluster-require-full-coverage", "no"), and stops it when t ends. It
// fails t when the cluster cannot be started and skips t under go test
// -short. Starting takes about two seconds, as for [Cluster].
func DedicatedCluster(t testing.TB, extra ...string) *ClusterServer {
	t.Helper()
	skipShort(t)
	if !mainRunning() {
		t.Fatal(errNoMain)
	}
	nodes, err := startNodes(3, extra...)
	for _, n := range nodes {
		if n != nil {
			t.Cleanup(n.stop)
		}
	}
	if err == nil {
		err = formCluster(nodes)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := &ClusterServer{started: true}
	for _, n := range nodes {
		c.addrs = append(c.addrs, n.addr)
	}
	return c
}

// startNodes starts n cluster-mode servers concurrently, with the extra
// redis-server flags.
func startNodes(n int, extra ...string) ([]*process, error) {
	nodes := make([]*process, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { nodes[i], errs[i] = startProcess(true, extra...) })
	}
	wg.Wait()
	return nodes, errors.Join(errs...)
}

// formCluster gives each node an equal share of the slots and a distinct
// config epoch, introduces the nodes to each other and waits until every
// node reports a healthy cluster.
func formCluster(nodes []*process) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	clients := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: n.addr, PoolSize: 1})
		defer clients[i].Close()
	}
	for i, c := range clients {
		lo, hi := i*clusterSlots/len(nodes), (i+1)*clusterSlots/len(nodes)-1
		if err := c.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
			return fmt.Errorf("redistest: cluster set-config-epoch on %s: %w", nodes[i].addr, err)
		}
		if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			return fmt.Errorf("redistest: cluster addslotsrange on %s (needs Redis >= 7): %w", nodes[i].addr, err)
		}
	}
	for _, n := range nodes[1:] {
		host, port, _ := net.SplitHostPort(n.addr)
		if err := clients[0].Do(ctx, "CLUSTER", "MEET", host, port, n.busPort).Err(); err != nil {
			return fmt.Errorf("redistest: cluster meet %s: %w", n.addr, err)
		}
	}
	return waitClusterOK(ctx, nodes, clients)
}

// waitClusterOK polls CLUSTER INFO on every node until each one knows all
// nodes, sees every slot served and reports cluster_state:ok.
func waitClusterOK(ctx context.Context, nodes []*process, clients []*redis.Client) error {
	want := map[string]string{
		"cluster_state":          "ok",
		"cluster_slots_assigned": strconv.Itoa(clusterSlots),
		"cluster_slots_ok":       strconv.Itoa(clusterSlots),
		"cluster_known_nodes":    strconv.Itoa(len(nodes)),
	}
	for i, c := range clients {
		var last string
		for !clusterInfoHas(last, want) {
			select {
			case <-ctx.Done():
				return fmt.Errorf("redistest: cluster node %s not ready after %s; last CLUSTER INFO:\n%s\n%s",
					nodes[i].addr, readyTimeout, last, nodes[i].logTail())
			case <-time.After(pollInterval):
			}
			last, _ = c.ClusterInfo(ctx).Result()
		}
	}
	return nil
}

// clusterInfoHas reports whether the CLUSTER INFO text info has every
// field of want with its value.
func clusterInfoHas(info string, want map[string]string) bool {
	found := 0
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && want[k] == v {
			found++
		}
	}
	return found == len(want)
}

// Addrs returns the host:port of every master (or the seeds of
// REDIS_CLUSTER_ADDRS).
func (c *ClusterServer) Addrs() []string { return append([]string(nil), c.addrs...) }

// Started reports whether this package started the cluster, as opposed to
// one named by REDIS_CLUSTER_ADDRS.
func (c *ClusterServer) Started() bool { return c.started }

// Options returns fresh cluster client options, to be adjusted before
// [redis.NewClusterClient].
func (c *ClusterServer) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: c.Addrs()}
}

// Client returns a new cluster client, closed when t ends.
func (c *ClusterServer) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(c.Options())
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// Clients returns n independent cluster clients (n app nodes), each closed
// when t ends.
func (c *ClusterServer) Clients(t testing.TB, n int) []*redis.ClusterClient {
	t.Helper()
	cs := make([]*redis.ClusterClient, n)
	for i := range cs {
		cs[i] = c.Client(t)
	}
	return cs
}
