package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// Batching on a cluster client: one queue per master, pipelines on the
// masters' node clients. The fault tests of cluster_failover_test.go and
// sentinel_test.go through batching stores, with the same bounds, are at
// the end.

// nodeCounters counts the script calls of a cluster client's node clients,
// by node address (a hook on each node client, added when go-redis creates
// it: call countNodes before the client's first command). A lone take of a
// batching store passes the cluster client's hooks and then its node's; a
// pipelined one only its node's.
type nodeCounters struct {
	mu     sync.Mutex
	byAddr map[string]*takeCounter
}

func countNodes(clients ...*redis.ClusterClient) *nodeCounters {
	n := &nodeCounters{byAddr: map[string]*takeCounter{}}
	for _, cc := range clients {
		cc.OnNewNode(func(node *redis.Client) { node.AddHook(n.of(node.Options().Addr)) })
	}
	return n
}

func (n *nodeCounters) of(addr string) *takeCounter {
	n.mu.Lock()
	defer n.mu.Unlock()
	c, ok := n.byAddr[addr]
	if !ok {
		c = &takeCounter{}
		n.byAddr[addr] = c
	}
	return c
}

// takeCounts are the counts of a takeCounter, read.
type takeCounts struct{ takes, roundTrips, pipelines, pipelined, noScript, redirected int64 }

func (c *takeCounter) counts() takeCounts {
	return takeCounts{c.takes.Load(), c.roundTrips.Load(), c.pipelines.Load(), c.pipelined.Load(), c.noScript.Load(), c.redirected.Load()}
}

// sum returns the totals over all nodes, and how many nodes got pipelines.
func (n *nodeCounters) sum() (total takeCounts, nodesPipelined int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.byAddr {
		cs := c.counts()
		total.takes += cs.takes
		total.roundTrips += cs.roundTrips
		total.pipelines += cs.pipelines
		total.pipelined += cs.pipelined
		total.noScript += cs.noScript
		total.redirected += cs.redirected
		if cs.pipelines > 0 {
			nodesPipelined++
		}
	}
	return total, nodesPipelined
}

// idsPerMaster returns perMaster identities for each master of client,
// by the slot of their keys.
func idsPerMaster(t *testing.T, client *redis.ClusterClient, kb core.KeyBuilder, limits []core.Limit, perMaster int) []string {
	t.Helper()
	masters := map[string]int{}
	var ids []string
	for i := 0; len(ids) < 3*perMaster; i++ {
		require.Less(t, i, 10_000, "three masters")
		id := "client-" + strconv.Itoa(i)
		master, err := client.MasterForKey(context.Background(), kb.AppendKeys(nil, id, limits)[0])
		require.NoError(t, err)
		if addr := master.Options().Addr; masters[addr] < perMaster {
			masters[addr]++
			ids = append(ids, id)
		}
	}
	return ids
}

// TestBatchingClusterConcurrency: 64 goroutines over 4 batching stores on 4
// cluster clients take a two-limit quota at one instant, on 6 identities,
// two per master; exactly the quota of each is admitted, both limits are
// charged exactly, every take is sent once, and every master got
// pipelines, on its own node client.
func TestBatchingClusterConcurrency(t *testing.T) {
	const (
		goroutines = 64
		takesEach  = 40
		quota      = 200 // of about 426 takes per identity
	)
	now := fixedClock()
	clients := batchClusterClients(t, redistest.Cluster(t), 4)
	nodes := countNodes(clients...)
	var lone takeCounter
	stores := make([]*redisstore.Store, len(clients))
	for i, c := range clients {
		c.AddHook(&lone)
		stores[i] = mustNew(t, c, redisstore.WithClock(now), redisstore.WithBatching())
	}
	kb := newKeyBuilder(t, clients[0])
	limits := []core.Limit{
		core.PerHour(1).WithBurst(quota).WithName("gcra"),
		core.PerHour(1).WithBurst(2 * quota).WithName("bucket").WithAlgorithm(core.TokenBucket),
	}
	ids := idsPerMaster(t, clients[0], kb, limits, 2)
	ctx := context.Background()
	for _, store := range stores { // dials, loads the script on every master
		for _, id := range ids {
			_, err := store.Take(ctx, nil, kb.AppendKeys(nil, id, limits), limits, 0)
			require.NoError(t, err)
		}
	}
	warm, _ := nodes.sum()
	warmLone := lone.takes.Load()

	admitted := make([]atomic.Int64, len(ids))
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			<-start
			store, i := stores[g%len(stores)], g%len(ids)
			keys := kb.AppendKeys(nil, ids[i], limits)
			for range takesEach {
				ds, err := store.Take(ctx, nil, keys, limits, 1)
				if err != nil {
					failed.Add(1)
					t.Log(err)
					continue
				}
				if ds[0].Allowed && ds[1].Allowed {
					admitted[i].Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	sent, nodesPipelined := nodes.sum()
	loneTakes := lone.takes.Load() - warmLone

	require.Zero(t, failed.Load(), "failed takes")
	for i, id := range ids {
		assert.Equal(t, int64(quota), admitted[i].Load(), "admitted of %s", id)
		peek, err := stores[0].Take(ctx, nil, kb.AppendKeys(nil, id, limits), limits, 0)
		require.NoError(t, err)
		assert.Equal(t, int64(0), peek[0].Remaining, "gcra remaining of %s", id)
		assert.Equal(t, int64(quota), peek[1].Remaining, "bucket remaining of %s: charged only with gcra", id)
	}
	t.Logf("%d takes: %d alone through the cluster clients, %d in %d pipelines on %d masters",
		sent.takes-warm.takes, loneTakes, sent.pipelined-warm.pipelined, sent.pipelines-warm.pipelines, nodesPipelined)
	assert.Equal(t, int64(goroutines*takesEach), sent.takes-warm.takes, "each take sent once")
	assert.Equal(t, sent.takes-warm.takes, loneTakes+sent.pipelined-warm.pipelined, "a take goes alone through the cluster client, or in a pipeline")
	assert.Zero(t, lone.pipelines.Load(), "pipelines through the cluster clients")
	assert.Equal(t, 3, nodesPipelined, "masters that got pipelines")
}

// TestBatchingClusterRoundTrips counts round trips on a cluster: a lone
// caller's takes each go alone, through the cluster client, never in a
// pipeline; 64 concurrent callers' takes share far fewer round trips than
// takes.
func TestBatchingClusterRoundTrips(t *testing.T) {
	client := batchClusterClients(t, redistest.Cluster(t), 1)[0]
	nodes := countNodes(client)
	var lone takeCounter
	client.AddHook(&lone)
	store, kb := newStore(t, client, redisstore.WithBatching())
	limits := []core.Limit{core.PerSecond(1_000_000)}
	ids := idsPerMaster(t, client, kb, limits, 1)
	ctx := context.Background()
	for _, id := range ids { // loads the script on every master
		_, err := store.Take(ctx, nil, kb.AppendKeys(nil, id, limits), limits, 1)
		require.NoError(t, err)
	}

	t.Run("c=1", func(t *testing.T) {
		before, _ := nodes.sum()
		loneBefore := lone.takes.Load()
		const n = 300
		for i := range n {
			_, err := store.Take(ctx, nil, kb.AppendKeys(nil, ids[i%len(ids)], limits), limits, 1)
			require.NoError(t, err)
		}
		after, _ := nodes.sum()
		assert.Equal(t, int64(n), lone.takes.Load()-loneBefore, "takes through the cluster client")
		assert.Equal(t, int64(n), after.takes-before.takes, "takes on the nodes")
		assert.Zero(t, after.pipelines-before.pipelines, "pipelines")
	})
	t.Run("c=64", func(t *testing.T) {
		before, _ := nodes.sum()
		const goroutines, takesEach = 64, 50
		var wg sync.WaitGroup
		var failed atomic.Int64
		for g := range goroutines {
			keys := kb.AppendKeys(nil, "caller-"+strconv.Itoa(g), limits)
			wg.Go(func() {
				for range takesEach {
					if _, err := store.Take(ctx, nil, keys, limits, 1); err != nil {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		require.Zero(t, failed.Load())
		after, nodesPipelined := nodes.sum()
		takes := after.takes - before.takes
		trips := after.roundTrips - before.roundTrips
		t.Logf("%d takes in %d round trips (%d pipelines, on %d masters): %.1f takes per round trip",
			takes, trips, after.pipelines-before.pipelines, nodesPipelined, float64(takes)/float64(trips))
		assert.Equal(t, int64(goroutines*takesEach), takes, "each take sent once")
		// How many takes share a round trip is bounded by how fast the
		// callers come back, here by the client's CPU under -race, and by
		// how many calls go at once (two per master: a take goes alone
		// while fewer are in flight): 2.0 takes per round trip measured
		// on a quiet 2-core machine (3.6-4.5 with one call at once, 2.8
		// then on a loaded CI run). Without batching it is 1.
		assert.Less(t, trips, takes*5/6, "round trips: at least 1.2 takes each")
		assert.Equal(t, 3, nodesPipelined, "masters that got pipelines")
	})
}

// redirectingCluster returns a cluster client of srv without retries whose
// slot map puts every slot on one master, and that master's address: a
// batching store sends the takes of the other masters' keys to it, in
// pipelines, and it answers them MOVED, as a master does to a client
// whose slot map is stale (a resharding, a failover it missed). The slot
// map stays wrong: go-redis reloads it from the same function.
func redirectingCluster(t *testing.T, srv *redistest.ClusterServer) (*redis.ClusterClient, string) {
	t.Helper()
	plain := srv.Client(t)
	slots, err := plain.ClusterSlots(context.Background()).Result()
	require.NoError(t, err)
	first := slots[0].Nodes[0].Addr
	opts := patientClusterOptions(srv.Options())
	opts.ClusterSlots = func(context.Context) ([]redis.ClusterSlot, error) {
		return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: first}}}}, nil
	}
	client := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client, first
}

// TestBatchingClusterRedirected: takes answered MOVED in a pipeline did not
// run; each is sent again, alone, through the cluster client, which
// follows the redirection. 64 goroutines over 6 identities (two per
// master) take a never-denying fixed window: no take fails, and each
// identity's count is exactly its takes (none charged twice, none lost).
func TestBatchingClusterRedirected(t *testing.T) {
	srv := redistest.Cluster(t)
	client, first := redirectingCluster(t, srv)
	nodes := countNodes(client)
	master, err := client.MasterForKey(context.Background(), "any")
	require.NoError(t, err)
	require.True(t, samePort(first, master.Options().Addr))
	first = master.Options().Addr // as the client names it
	var lone takeCounter
	client.AddHook(&lone)
	store, kb := newStore(t, client, redisstore.WithClock(fixedClock()), redisstore.WithBatching())
	limits := []core.Limit{dayQuota}
	ids := idsPerMaster(t, srv.Client(t), kb, limits, 2)
	ctx := context.Background()
	for _, id := range ids { // loads the script on every master
		_, err := store.Take(ctx, nil, kb.AppendKeys(nil, id, limits), limits, 0)
		require.NoError(t, err)
	}
	warm, _ := nodes.sum()
	warmFirst, warmLone := nodes.of(first).counts(), lone.takes.Load()

	const goroutines, takesEach = 64, 30
	took := make([]atomic.Int64, len(ids))
	var failed atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		i := g % len(ids)
		keys := kb.AppendKeys(nil, ids[i], limits)
		wg.Go(func() {
			for range takesEach {
				ds, err := store.Take(ctx, nil, keys, limits, 1)
				if err != nil {
					failed.Add(1)
					t.Log(err)
					continue
				}
				if ds[0].Allowed {
					took[i].Add(1)
				}
			}
		})
	}
	wg.Wait()
	sent, _ := nodes.sum()
	onFirst := nodes.of(first).counts()
	loneTakes := lone.takes.Load() - warmLone
	sent.pipelined -= warm.pipelined
	sent.redirected -= warm.redirected
	onFirst.pipelined -= warmFirst.pipelined
	onFirst.pipelines -= warmFirst.pipelines
	onFirst.redirected -= warmFirst.redirected

	require.Zero(t, failed.Load(), "failed takes")
	for i, id := range ids {
		got, err := store.Take(ctx, nil, kb.AppendKeys(nil, id, limits), limits, 0)
		require.NoError(t, err)
		assert.Equal(t, took[i].Load(), dayQuota.Rate-got[0].Remaining, "charges of %s: one per take", id)
	}
	t.Logf("%d takes: %d in %d pipelines to %s, %d of them answered MOVED; %d through the cluster client (lone takes and redirected ones)",
		goroutines*takesEach, onFirst.pipelined, onFirst.pipelines, first, onFirst.redirected, loneTakes)
	assert.Equal(t, sent.pipelined, onFirst.pipelined, "every pipeline went to the one master of the slot map")
	assert.Positive(t, onFirst.redirected, "pipelined takes answered MOVED")
	assert.Equal(t, int64(goroutines*takesEach), loneTakes+sent.pipelined-sent.redirected,
		"takes: each sent once, or redirected and sent once more through the cluster client")
}

// TestBatchingRedirectionsStayInBounds: after a slot map change (a master
// seen for the first time), the queues of nodes that no longer serve their
// key are dropped, so a store keeps no more queues than the cluster has
// masters. Measured through the batching store's takes on a cluster whose
// slot map alternates between two layouts.
func TestBatchingRedirectionsStayInBounds(t *testing.T) {
	srv := redistest.Cluster(t)
	plain := srv.Client(t)
	slots, err := plain.ClusterSlots(context.Background()).Result()
	require.NoError(t, err)
	var wrong atomic.Bool
	opts := patientClusterOptions(srv.Options())
	opts.ClusterSlots = func(context.Context) ([]redis.ClusterSlot, error) {
		if wrong.Load() {
			return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: slots[0].Nodes[0].Addr}}}}, nil
		}
		return slots, nil
	}
	client := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	store, kb := newStore(t, client, redisstore.WithBatchingAlone())
	limits := []core.Limit{core.PerSecond(1_000_000)}
	ids := idsPerMaster(t, plain, kb, limits, 2)
	ctx := context.Background()
	takeAll := func() {
		for _, id := range ids {
			_, err := store.Take(ctx, nil, kb.AppendKeys(nil, id, limits), limits, 1)
			require.NoError(t, err)
		}
	}
	var probe string // a key of another master than the first
	for _, id := range ids {
		key := kb.AppendKeys(nil, id, limits)[0]
		if master, err := plain.MasterForKey(ctx, key); err == nil && !samePort(master.Options().Addr, slots[0].Nodes[0].Addr) {
			probe = key
		}
	}
	require.NotEmpty(t, probe)
	for round := range 6 {
		wrong.Store(round%2 == 1)
		client.ReloadState(ctx)
		require.Eventually(t, func() bool {
			master, err := client.MasterForKey(ctx, probe)
			return err == nil && samePort(master.Options().Addr, slots[0].Nodes[0].Addr) == wrong.Load()
		}, 5*time.Second, 10*time.Millisecond, "the slot map was reloaded")
		takeAll()
		want := 3
		if wrong.Load() {
			want = 1
		}
		assert.Equal(t, want, redisstore.MasterQueues(store), "queues in round %d", round)
	}
}

// samePort reports whether two node addresses have the same port: a
// client whose slot map comes from ClusterOptions.ClusterSlots names the
// nodes ":port".
func samePort(a, b string) bool {
	_, pa, _ := net.SplitHostPort(a)
	_, pb, _ := net.SplitHostPort(b)
	return pa == pb
}

// proxiedCluster returns a cluster client of srv whose slot map sends the
// slots of one master through a proxy, the proxy, and that master's
// address.
func proxiedCluster(t *testing.T, srv *redistest.ClusterServer, budget time.Duration) (*redis.ClusterClient, *redistest.Proxy, string) {
	t.Helper()
	slots, err := srv.Client(t).ClusterSlots(context.Background()).Result()
	require.NoError(t, err)
	victim := slots[0].Nodes[0].Addr
	proxy := redistest.NewProxy(t, victim)
	for i := range slots {
		if slots[i].Nodes[0].Addr == victim {
			slots[i].Nodes = []redis.ClusterNode{{Addr: proxy.Addr()}}
		}
	}
	opts := redisstore.SafeClusterOptions(srv.Options())
	opts.ClusterSlots = func(context.Context) ([]redis.ClusterSlot, error) { return slots, nil }
	client := redis.NewClusterClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client, proxy, victim
}

// scriptRuns returns the script commands (EVALSHA and EVAL) the server at
// client ran or rejected (commandstats calls and rejected_calls).
func scriptRuns(t *testing.T, client *redis.Client) int64 {
	t.Helper()
	info, err := client.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	var n int64
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if name != "cmdstat_evalsha" && name != "cmdstat_eval" || !ok {
			continue
		}
		for _, field := range strings.Split(stats, ",") {
			k, v, _ := strings.Cut(field, "=")
			if k == "calls" || k == "rejected_calls" {
				c, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
				n += c
			}
		}
	}
	return n
}

// TestBatchingNoResendAfterTimeout: a proxy holds the replies of a node
// for 0 or 80 ms, alternately, while 64 callers with a 50 ms deadline each
// send batched takes of one never-denying fixed window, so that pipelines
// time out with their takes written and run. Afterwards no take ran twice:
// the count the server holds is at least the admissions the callers were
// told of and at most those plus the takes that failed after they were
// sent; and the server ran no more script commands than the store sent
// (nothing resent below the store either).
func TestBatchingNoResendAfterTimeout(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		srv := redistest.Dedicated(t)
		proxy := redistest.NewProxy(t, srv.Addr())
		opts := srv.Options()
		opts.Addr = proxy.Addr()
		client := redisstore.NewClient(opts)
		t.Cleanup(func() { _ = client.Close() })
		var counter takeCounter
		client.AddHook(&counter)
		checker := srv.Client(t)
		noResendAfterTimeout(t, client, proxy, counter.takes.Load, func() int64 { return scriptRuns(t, checker) })
	})
	t.Run("cluster", func(t *testing.T) {
		srv := redistest.Cluster(t)
		client, proxy, victim := proxiedCluster(t, srv, budget)
		nodes := countNodes(client)
		var lone takeCounter
		client.AddHook(&lone)
		checker := redis.NewClient(&redis.Options{Addr: victim})
		t.Cleanup(func() { _ = checker.Close() })
		sent := func() int64 { // by the store: lone takes, and pipelined ones
			total, _ := nodes.sum()
			return lone.takes.Load() + total.pipelined
		}
		noResendAfterTimeout(t, client, proxy, sent, func() int64 { return scriptRuns(t, checker) })
	})
}

// noResendAfterTimeout runs TestBatchingNoResendAfterTimeout on client,
// whose replies proxy delays; sent counts the script commands the store
// sent and runs those the server ran or rejected.
func noResendAfterTimeout(t *testing.T, client redis.UniversalClient, proxy *redistest.Proxy, sent, runs func() int64) {
	const (
		callers  = 64
		duration = 1500 * time.Millisecond
		slow     = 80 * time.Millisecond
	)
	store, kb := newStore(t, client, redisstore.WithClock(fixedClock()), redisstore.WithBatching())
	limits := []core.Limit{dayQuota}
	bg := context.Background()
	keys := kb.AppendKeys(nil, "hot", limits)
	if cc, ok := client.(*redis.ClusterClient); ok { // a key of the proxied master
		for i := 0; ; i++ {
			keys = kb.AppendKeys(keys[:0], "hot-"+strconv.Itoa(i), limits)
			master, err := cc.MasterForKey(bg, keys[0])
			require.NoError(t, err)
			if samePort(master.Options().Addr, proxy.Addr()) {
				break
			}
		}
	}
	_, err := store.Take(bg, nil, keys, limits, 0) // dials, loads the script
	require.NoError(t, err)
	sentBefore, runsBefore := sent(), runs()

	var admitted, mayHaveRun, notSent, other atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			proxy.SetDelay(time.Duration(i%2) * slow)
			select {
			case <-stop:
				proxy.SetDelay(0)
				return
			case <-time.After(150 * time.Millisecond):
			}
		}
	})
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(bg, budget)
				ds, err := store.Take(ctx, nil, keys, limits, 1)
				cancel()
				switch {
				case err == nil && ds[0].Allowed:
					admitted.Add(1)
				case err == nil:
					other.Add(1)
				case !errors.Is(err, core.ErrStoreUnavailable):
					other.Add(1)
					t.Log(err)
				case strings.Contains(err.Error(), "not sent"):
					notSent.Add(1)
				default:
					mayHaveRun.Add(1)
				}
			}
		})
	}
	time.Sleep(duration)
	close(stop)
	wg.Wait()
	time.Sleep(2 * slow) // the last delayed replies
	storeSent, serverRuns := sent()-sentBefore, runs()-runsBefore

	got, err := store.Take(bg, nil, keys, limits, 0)
	require.NoError(t, err)
	counted := dayQuota.Rate - got[0].Remaining
	t.Logf("%d takes sent: %d admitted, %d failed after being sent, %d never sent; the server counts %d and ran %d script commands",
		storeSent, admitted.Load(), mayHaveRun.Load(), notSent.Load(), counted, serverRuns)
	require.Zero(t, other.Load(), "denials or bugs")
	assert.Positive(t, mayHaveRun.Load(), "takes timed out after being sent")
	assert.Positive(t, admitted.Load(), "takes admitted")
	assert.GreaterOrEqual(t, counted, admitted.Load(), "count: every admission told of")
	assert.LessOrEqual(t, counted, admitted.Load()+mayHaveRun.Load(), "count: no take ran twice")
	assert.LessOrEqual(t, counted, storeSent, "count: at most the takes sent")
	// A take passes the hooks before go-redis writes it: it may not get
	// written (its deadline ended first), but it is never written twice.
	assert.LessOrEqual(t, serverRuns, storeSent, "script commands the server ran: no more than the store sent, none resent")
}

// mayHaveRun reports whether a degraded decision's take may have run on
// the server: it failed after it was sent (not by the open breaker, not
// dropped unsent from a queue).
func (r record) mayHaveRun() bool {
	return r.res.Degraded && !r.breakerOpen() && !strings.Contains(fmt.Sprint(r.res.Err), "not sent")
}

// charges returns, by identity, what l's dayQuota window counts (a peek,
// retried for up to 5 s while degraded).
func charges(t *testing.T, l *core.Limiter, ids []string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, id := range ids {
		deadline := time.Now().Add(5 * time.Second)
		for {
			res, err := l.Take(context.Background(), core.Request{Identity: id})
			require.NoError(t, err)
			if !res.Degraded {
				out[id] = dayQuota.Rate - res.Decision(0).Remaining
				break
			}
			require.True(t, time.Now().Before(deadline), "peek of %s: %v", id, res.Err)
			time.Sleep(20 * time.Millisecond)
		}
	}
	return out
}

// assertChargedOnce checks what each identity's dayQuota window counted
// between before and after: no take was charged twice (at most the
// admissions its decisions in recs were told of, plus the takes that may
// have run), and, if exact (no write was lost), no admission was lost.
func assertChargedOnce(t *testing.T, name string, recs []record, before, after map[string]int64, exact bool) {
	t.Helper()
	var charged, told, uncertain int64
	for id := range before {
		var admitted, maybe int64
		for _, r := range recs {
			switch {
			case r.identity != id:
			case !r.res.Degraded && r.res.Allowed:
				admitted++
			case r.mayHaveRun():
				maybe++
			}
		}
		n := after[id] - before[id]
		charged, told, uncertain = charged+n, told+admitted, uncertain+maybe
		assert.LessOrEqual(t, n, admitted+maybe, "%s: %s charged twice", name, id)
		if exact {
			assert.GreaterOrEqual(t, n, admitted, "%s: %s lost admissions", name, id)
		}
	}
	t.Logf("%s: %d charges for %d admissions told of and %d takes that may have run", name, charged, told, uncertain)
}

// TestBatchingClusterMasterKilled is TestClusterMasterKilled through a
// batching store (a queue per master; dayQuota for both limiters): the
// same bounds (the other masters' clients see no error, the dead master's
// clients no degraded decision ending more than 0.5 s after the
// promotion), and no take was charged twice: on the surviving masters each
// count is exactly the admissions, on the promoted replica at most the
// admissions plus the takes that may have run.
func TestBatchingClusterMasterKilled(t *testing.T) {
	hc := redistest.ReplicatedCluster(t)
	client := redisstore.NewClusterClient(hc.Options())
	t.Cleanup(func() { _ = client.Close() })
	nodes := countNodes(client)
	store := batchedSafeStore(t, client)
	l := faultLimiterTimeout(t, isolationTimeout, store, client, []core.Limit{dayQuota}, core.WithoutBreaker())
	withBreaker := faultLimiterTimeout(t, isolationTimeout, store, client, []core.Limit{dayQuota}, core.WithBreaker(core.BreakerConfig{}))

	hot := clusterIdentities(t, hc, hc.Addrs()[0], "", false, 1)[0] // any identity
	victim := hc.Shards(t, hc.Addrs()[0], "{"+hot+"}")[0]
	onVictim := clusterIdentities(t, hc, victim.Replica, victim.Master, true, 4)
	elsewhere := clusterIdentities(t, hc, victim.Replica, victim.Master, false, 8)
	isVictim := map[string]bool{hot: true}
	for _, id := range onVictim {
		isVictim[id] = true
	}
	all := append(append([]string{hot}, onVictim...), elsewhere...)

	day := time.Now().UTC().Truncate(24 * time.Hour)
	warmUp(t, l, all)
	warmUp(t, withBreaker, append(append([]string(nil), onVictim...), elsewhere...))
	beforePlain := charges(t, l, all)
	beforeBreaker := charges(t, withBreaker, append(append([]string(nil), onVictim...), elsewhere...))
	tr := newTraffic()
	tr.watchServers(healthyMasters(t, hc, elsewhere, victim)...)
	tr.start("plain", l, append(append([]string(nil), onVictim...), elsewhere...), 1, pace)
	tr.start("plain", l, []string{hot, hot, hot, hot}, 1, pace/4)
	tr.start("breaker", withBreaker, append(append([]string(nil), onVictim...), elsewhere...), 1, pace)
	tr.sleepUntil(500 * time.Millisecond)
	healthy, _ := nodes.sum()
	promoted := watchRole(t, hc, victim.Replica, tr)
	hc.Kill(t, victim.Master)
	killedAt := tr.now()
	var promotedAt time.Duration
	select {
	case promotedAt = <-promoted:
	case <-time.After(20 * time.Second):
		t.Fatal("the replica was not promoted within 20 s")
	}
	tr.sleepUntil(promotedAt + 1500*time.Millisecond)
	recordsAll := tr.Stop()
	recs, recsb := of(recordsAll, "plain"), of(recordsAll, "breaker")
	total, nodesPipelined := nodes.sum()

	t.Logf("master killed at %s; replica promoted %s later", killedAt.Round(time.Millisecond), (promotedAt - killedAt).Round(time.Millisecond))
	t.Logf("healthy: %d takes, %d in %d pipelines; in all: %d takes, %d in %d pipelines on %d nodes; %d queues at the end",
		healthy.takes, healthy.pipelined, healthy.pipelines, total.takes, total.pipelined, total.pipelines, nodesPipelined, redisstore.MasterQueues(store))
	assert.Positive(t, healthy.pipelines, "pipelines before the kill")
	assert.Equal(t, 3, redisstore.MasterQueues(store), "queues: the three masters, the dead one dropped")
	for _, tt := range []struct {
		name string
		recs []record
	}{{"no breaker", recs}, {"default breaker", recsb}} {
		requireNoBugs(t, tt.recs, tt.name)
		victimRecs := where(tt.recs, func(r record) bool { return isVictim[r.identity] })
		otherRecs := where(tt.recs, func(r record) bool { return !isVictim[r.identity] })
		assertNoneDegraded(t, otherRecs, tt.name+": clients of the other masters")
		for _, r := range firstN(degraded(otherRecs), 5) {
			t.Logf("%s: degraded decision of %s, another master's client, from %s after the kill, for %s: %v",
				tt.name, r.identity, (r.start - killedAt).Round(time.Millisecond), r.took.Round(time.Millisecond), r.res.Err)
		}
		failed := degraded(victimRecs)
		require.NotEmpty(t, failed, "%s: the dead master's clients saw the outage", tt.name)
		last := failed[0].end()
		for _, r := range failed {
			last = max(last, r.end())
		}
		t.Logf("%s: dead master's clients saw %d degraded decisions (%d by the open breaker), the last ending %s after the kill, %s after the promotion; other masters' clients: %d decisions, %d degraded",
			tt.name, len(failed), len(where(failed, record.breakerOpen)), (last - killedAt).Round(time.Millisecond),
			(last - promotedAt).Round(time.Millisecond), len(otherRecs), len(degraded(otherRecs)))
		assert.LessOrEqual(t, last-promotedAt, switchover, "%s: errors after the promotion", tt.name)
	}

	measureOverAdmission(t, l, recs, hot, killedAt, day)
	if now := time.Now().UTC().Truncate(24 * time.Hour); !now.Equal(day) {
		t.Log("the day window changed during the test: charges not checked")
		return
	}
	for _, tt := range []struct {
		name   string
		l      *core.Limiter
		recs   []record
		before map[string]int64
	}{{"no breaker", l, recs, beforePlain}, {"default breaker", withBreaker, recsb, beforeBreaker}} {
		after := charges(t, tt.l, mapKeys(tt.before))
		victims, others := split(tt.before, isVictim)
		assertChargedOnce(t, tt.name+", other masters", tt.recs, others, after, true)
		assertChargedOnce(t, tt.name+", dead master", tt.recs, victims, after, false) // the failover loses writes
	}
}

// firstN returns the first n records of recs, or all of them.
func firstN(recs []record, n int) []record { return recs[:min(n, len(recs))] }

// mapKeys returns the keys of m.
func mapKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// split returns the entries of m whose key in is true, and the others.
func split(m map[string]int64, in map[string]bool) (yes, no map[string]int64) {
	yes, no = map[string]int64{}, map[string]int64{}
	for k, v := range m {
		if in[k] {
			yes[k] = v
		} else {
			no[k] = v
		}
	}
	return yes, no
}

// TestBatchingClusterManualFailover is TestClusterManualFailover through a
// batching store (dayQuota instead of bigLimit, to count charges across a
// minute boundary): with a 150 ms timeout no decision is degraded; with
// the default 50 ms only the failed-over shard's decisions in flight
// during the failover may be; and, since a manual failover loses no write,
// every identity's count is exactly its admissions, plus at most the takes
// that may have run.
func TestBatchingClusterManualFailover(t *testing.T) {
	hc := redistest.ReplicatedCluster(t)
	client := redisstore.NewClusterClient(hc.Options())
	t.Cleanup(func() { _ = client.Close() })
	nodes := countNodes(client)
	store := batchedSafeStore(t, client)
	short := faultLimiter(t, store, client, []core.Limit{dayQuota}, core.WithBreaker(core.BreakerConfig{}))
	long := faultLimiterTimeout(t, 150*time.Millisecond, store, client, []core.Limit{dayQuota}, core.WithBreaker(core.BreakerConfig{}))
	ids := identities("client", 12)
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = "{" + id + "}"
	}
	shards := hc.Shards(t, hc.Addrs()[0], keys...)
	onShard := map[string]bool{}
	for i, s := range shards {
		onShard[ids[i]] = s == shards[0]
	}
	day := time.Now().UTC().Truncate(24 * time.Hour)
	warmUp(t, short, ids)
	warmUp(t, long, ids)
	knowReplicas(t, client, 3)
	beforeShort, beforeLong := charges(t, short, ids), charges(t, long, ids)

	tr := newTraffic()
	tr.watchServers(healthyMasters(t, hc, ids, shards[0])...)
	tr.start("50ms", short, ids, 1, pace)
	tr.start("150ms", long, ids, 1, pace)
	tr.sleepUntil(healthyFor)
	healthy, _ := nodes.sum()
	failoverAt := tr.now()
	hc.Failover(t, shards[0].Replica)
	promotedAt := tr.now()
	demotedAt := waitRole(t, hc, shards[0].Master, "slave", tr)
	tr.sleepUntil(demotedAt + time.Second)
	all := tr.Stop()
	recs, recsLong := of(all, "50ms"), of(all, "150ms")
	total, nodesPipelined := nodes.sum()

	requireNoBugs(t, recs)
	requireNoBugs(t, recsLong)
	failed, excused := unexcused(degraded(recs))
	t.Logf("CLUSTER FAILOVER: replica promoted after %s, old master demoted %s later; 50 ms timeout: %d decisions, %d degraded (%d more during stalls of the process or of a healthy server); 150 ms timeout: %d decisions, %d degraded, during the failover %s",
		(promotedAt - failoverAt).Round(time.Millisecond), (demotedAt - promotedAt).Round(time.Millisecond),
		len(recs), len(failed), excused, len(recsLong), len(degraded(recsLong)),
		latencyOf(where(recsLong, func(r record) bool { return r.end() >= failoverAt && r.start <= demotedAt })))
	t.Logf("healthy: %d takes, %d in %d pipelines; in all: %d takes, %d in %d pipelines on %d nodes, %d answered MOVED; %d queues at the end",
		healthy.takes, healthy.pipelined, healthy.pipelines, total.takes, total.pipelined, total.pipelines, nodesPipelined, total.redirected, redisstore.MasterQueues(store))
	assert.Positive(t, healthy.pipelines, "pipelines before the failover")
	assertNoneDegraded(t, recsLong, "degraded decisions with a 150 ms timeout")
	for _, r := range failed {
		assert.True(t, onShard[r.identity], "degraded decision of %s, a client of another shard", r.identity)
		assert.True(t, r.end() >= failoverAt && r.start <= demotedAt, "degraded decision from %s to %s, not in flight during the failover (%s to %s)",
			r.start, r.end(), failoverAt, demotedAt)
	}
	if now := time.Now().UTC().Truncate(24 * time.Hour); !now.Equal(day) {
		t.Log("the day window changed during the test: charges not checked")
		return
	}
	assertChargedOnce(t, "50ms", recs, beforeShort, charges(t, short, ids), true)
	assertChargedOnce(t, "150ms", recsLong, beforeLong, charges(t, long, ids), true)
}
