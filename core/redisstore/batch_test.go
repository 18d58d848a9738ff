package redisstore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/core/storetest"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// batchings are the ways of batching the conformance suites run through:
// the option as shipped (lone takes go alone, concurrent ones share
// pipelines) and a test variant where every take goes through a pipeline,
// so that the one-take-at-a-time cases check the pipeline's replies too.
var batchings = []struct {
	name string
	opt  redisstore.Option
}{
	{"batched", redisstore.WithBatching()},
	{"batched, lone takes pipelined", redisstore.WithBatchingAlone()},
}

// patientTimeout is the socket and pool timeout of the batching tests'
// clients: [NewClient]'s settings (no retries, which batching needs) with
// backstops long enough for a loaded machine under -race, since these
// tests take without a deadline; the fault tests use [NewClient] as is.
const patientTimeout = 5 * time.Second

func patient(read, write, pool, dial *time.Duration) {
	*read, *write, *pool, *dial = patientTimeout, patientTimeout, patientTimeout, patientTimeout
}

func patientOptions(opt *redis.Options) *redis.Options {
	o := redisstore.SafeOptions(opt)
	patient(&o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.DialTimeout)
	return o
}

func patientClusterOptions(opt *redis.ClusterOptions) *redis.ClusterOptions {
	o := redisstore.SafeClusterOptions(opt)
	patient(&o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout, &o.DialTimeout)
	return o
}

func patientClient(opt *redis.Options) *redis.Client { return redis.NewClient(patientOptions(opt)) }

func patientClusterClient(opt *redis.ClusterOptions) *redis.ClusterClient {
	return redis.NewClusterClient(patientClusterOptions(opt))
}

// batchClients returns n clients of srv without retries, closed when t
// ends.
func batchClients(t testing.TB, srv *redistest.Server, n int) []*redis.Client {
	t.Helper()
	cs := make([]*redis.Client, n)
	for i := range cs {
		cs[i] = patientClient(srv.Options())
		t.Cleanup(func() { _ = cs[i].Close() })
	}
	return cs
}

// batchClusterClients returns n cluster clients of srv without retries
// ([redisstore.NewClusterClient]), closed when t ends.
func batchClusterClients(t testing.TB, srv *redistest.ClusterServer, n int) []*redis.ClusterClient {
	t.Helper()
	cs := make([]*redis.ClusterClient, n)
	for i := range cs {
		cs[i] = patientClusterClient(srv.Options())
		t.Cleanup(func() { _ = cs[i].Close() })
	}
	return cs
}

// batchedBackends are the backends of conformance_test.go with the
// batching tests' clients: the standalone server and the three-master
// cluster (one queue per master).
var batchedBackends = []backend{
	{"standalone", func(t testing.TB, n int) []redis.UniversalClient {
		return universal(batchClients(t, redistest.Standalone(t), n))
	}},
	{"cluster", func(t testing.TB, n int) []redis.UniversalClient {
		return universal(batchClusterClients(t, redistest.Cluster(t), n))
	}},
}

// TestConformanceBatched runs the conformance, concurrency and differential
// suites on the standalone server and on the cluster through batching
// stores, then checks that every key they left has a TTL.
func TestConformanceBatched(t *testing.T) {
	memory := func(t *testing.T, now func() time.Time) core.Store {
		s, err := memstore.New(memstore.WithClock(now))
		require.NoError(t, err)
		return s
	}
	for _, be := range batchedBackends {
		for _, b := range batchings {
			t.Run(be.name+", "+b.name, func(t *testing.T) {
				client := be.client(t)
				t.Cleanup(func() { assertKeysExpire(t, client, storetestKeys) })
				t.Run("Run", func(t *testing.T) { // keys expire on the test clock, as in TestConformance
					storetest.Run(t, func(t *testing.T, now func() time.Time) core.Store {
						s, err := redisstore.NewWithTestClockExpiry(client, now, b.opt)
						require.NoError(t, err)
						return s
					})
				})
				t.Run("RunConcurrency", func(t *testing.T) {
					storetest.RunConcurrency(t, func(t *testing.T, now func() time.Time, n int) []core.Store {
						stores := make([]core.Store, n)
						for i, c := range be.clients(t, n) {
							stores[i] = mustNew(t, c, redisstore.WithClock(now), b.opt)
						}
						return stores
					})
				})
				t.Run("RunDifferential", func(t *testing.T) {
					storetest.RunDifferential(t, memory, func(t *testing.T, now func() time.Time) core.Store {
						s, err := redisstore.NewWithTestClockExpiry(client, now, b.opt)
						require.NoError(t, err)
						return s
					})
				})
			})
		}
	}
}

// takeCounter is a go-redis hook counting the script calls a client sends
// (EVALSHA and EVAL), alone or in pipelines, and its round trips for them.
type takeCounter struct {
	takes      atomic.Int64 // script commands
	roundTrips atomic.Int64 // single script commands and pipelines
	pipelines  atomic.Int64
	pipelined  atomic.Int64 // script commands in pipelines
	noScript   atomic.Int64 // pipelined script commands answered NOSCRIPT
	redirected atomic.Int64 // pipelined script commands answered MOVED or ASK
}

func isScriptCall(cmd redis.Cmder) bool {
	name := cmd.Name()
	return name == "evalsha" || name == "eval"
}

func (c *takeCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *takeCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isScriptCall(cmd) {
			c.takes.Add(1)
			c.roundTrips.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *takeCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var n int64
		for _, cmd := range cmds {
			if isScriptCall(cmd) {
				n++
			}
		}
		if n > 0 {
			c.takes.Add(n)
			c.pipelined.Add(n)
			c.roundTrips.Add(1)
			c.pipelines.Add(1)
		}
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			e := cmd.Err()
			switch {
			case !isScriptCall(cmd) || e == nil:
			case redis.HasErrorPrefix(e, "NOSCRIPT"):
				c.noScript.Add(1)
			case redis.HasErrorPrefix(e, "MOVED"), redis.HasErrorPrefix(e, "ASK"):
				c.redirected.Add(1)
			}
		}
		return err
	}
}

// fixedClock returns a test clock that never moves: exact counts.
func fixedClock() func() time.Time {
	at := storetest.Start()
	return func() time.Time { return at }
}

// TestBatchingConcurrency: 64 goroutines over 4 batching stores on 4
// clients take a two-limit quota at one instant; exactly the quota is
// admitted, both limits are charged exactly, and the takes did share
// pipelines.
func TestBatchingConcurrency(t *testing.T) {
	const (
		goroutines = 64
		takesEach  = 40
		quota      = 1000 // of 2560 takes
	)
	now := fixedClock()
	clients := batchClients(t, redistest.Standalone(t), 4)
	var counter takeCounter
	stores := make([]*redisstore.Store, len(clients))
	for i, c := range clients {
		c.AddHook(&counter)
		stores[i] = mustNew(t, c, redisstore.WithClock(now), redisstore.WithBatching())
	}
	kb := newKeyBuilder(t, clients[0])
	limits := []core.Limit{
		core.PerHour(1).WithBurst(quota).WithName("gcra"),
		core.PerHour(1).WithBurst(2 * quota).WithName("bucket").WithAlgorithm(core.TokenBucket),
	}
	keys := kb.AppendKeys(nil, "hammered", limits)
	ctx := context.Background()

	var admitted, failed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			<-start
			store := stores[g%len(stores)]
			for range takesEach {
				ds, err := store.Take(ctx, nil, keys, limits, 1)
				if err != nil {
					failed.Add(1)
					continue
				}
				if ds[0].Allowed && ds[1].Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()

	require.Zero(t, failed.Load(), "failed takes")
	assert.Equal(t, int64(quota), admitted.Load(), "admitted")
	peek, err := stores[0].Take(ctx, nil, keys, limits, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(0), peek[0].Remaining, "gcra remaining")
	assert.Equal(t, int64(quota), peek[1].Remaining, "bucket remaining: charged only with gcra")
	t.Logf("%d takes in %d round trips (%d pipelines)", counter.takes.Load(), counter.roundTrips.Load(), counter.pipelines.Load())
	assert.Positive(t, counter.pipelines.Load(), "pipelines")
}

// TestBatchingRoundTrips counts round trips: a lone caller's takes each go
// alone, never in a pipeline; 64 concurrent callers' takes share far fewer
// round trips than takes.
func TestBatchingRoundTrips(t *testing.T) {
	client := batchClients(t, redistest.Standalone(t), 1)[0]
	store, kb := newStore(t, client, redisstore.WithBatching())
	limits := []core.Limit{core.PerSecond(1_000_000)}
	ctx := context.Background()
	_, err := store.Take(ctx, nil, kb.AppendKeys(nil, "warm", limits), limits, 1) // loads the script
	require.NoError(t, err)
	var counter takeCounter
	client.AddHook(&counter)

	t.Run("c=1", func(t *testing.T) {
		counter = takeCounter{}
		const n = 200
		keys := kb.AppendKeys(nil, "alone", limits)
		for range n {
			_, err := store.Take(ctx, nil, keys, limits, 1)
			require.NoError(t, err)
		}
		assert.Equal(t, int64(n), counter.takes.Load(), "takes sent")
		assert.Equal(t, int64(n), counter.roundTrips.Load(), "round trips")
		assert.Zero(t, counter.pipelines.Load(), "pipelines")
	})
	t.Run("c=64", func(t *testing.T) {
		counter = takeCounter{}
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
		takes, trips := counter.takes.Load(), counter.roundTrips.Load()
		t.Logf("%d takes in %d round trips (%d pipelines): %.1f takes per round trip", takes, trips, counter.pipelines.Load(), float64(takes)/float64(trips))
		assert.Equal(t, int64(goroutines*takesEach), takes, "each take sent once")
		assert.Less(t, trips, takes/8, "round trips")
	})
}

// TestBatchingDoneContexts holds a take in flight (a proxy delays replies by
// 200 ms) and queues takes behind it: those whose context ends while they
// wait, or is done already, return at once and are never sent (no EVALSHA,
// no key); one that was sent and whose caller gives up returns by its
// deadline, without cutting the pipeline short for a take with a later
// deadline (which sends it).
func TestBatchingDoneContexts(t *testing.T) {
	const delay = 200 * time.Millisecond
	srv := redistest.Dedicated(t)
	checker := srv.Client(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	opts := srv.Options()
	opts.Addr = proxy.Addr()
	client := patientClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	store, kb := newStore(t, client, redisstore.WithBatching())
	limits := []core.Limit{core.PerHour(100)} // a key lives 36 s
	keysOf := func(id string) []string { return kb.AppendKeys(nil, id, limits) }
	bg := context.Background()
	_, err := store.Take(bg, nil, keysOf("warm"), limits, 1) // dials, loads the script
	require.NoError(t, err)
	var counter takeCounter
	client.AddHook(&counter)
	require.NoError(t, checker.ConfigResetStat(bg).Err())
	proxy.SetDelay(delay)

	type outcome struct {
		took time.Duration
		err  error
	}
	take := func(ctx context.Context, id string) chan outcome {
		ch := make(chan outcome, 1)
		go func() {
			start := time.Now()
			_, err := store.Take(ctx, nil, keysOf(id), limits, 1)
			ch <- outcome{time.Since(start), err}
		}()
		return ch
	}
	waitSent := func(n int64) {
		require.Eventually(t, func() bool { return counter.takes.Load() == n }, time.Second, time.Millisecond)
	}
	withTimeout := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(bg, d)
		t.Cleanup(cancel)
		return ctx
	}

	inFlight := make([]chan outcome, redisstore.MaxInFlight) // alone, held 200 ms
	for i := range inFlight {
		inFlight[i] = take(withTimeout(2*time.Second), "in-flight-"+strconv.Itoa(i))
		waitSent(int64(i + 1))
	}
	expires := take(withTimeout(30*time.Millisecond), "expires-queued")
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	gone := take(cancelled, "cancelled-queued")
	time.Sleep(5 * time.Millisecond) // expires and gone queue first
	// Queued before leader, but with the earlier deadline: leader sends
	// the pipeline of both at ~200 ms, replied at ~400 ms.
	follower := take(withTimeout(delay+100*time.Millisecond), "gives-up-sent")
	time.Sleep(5 * time.Millisecond)
	leader := take(withTimeout(2*time.Second), "leader")

	o := <-expires
	assert.ErrorIs(t, o.err, context.DeadlineExceeded, "expires-queued")
	assert.ErrorIs(t, o.err, core.ErrStoreUnavailable, "expires-queued")
	assert.Less(t, o.took, 30*time.Millisecond+lateness, "expires-queued returns by its deadline")
	o = <-gone
	assert.ErrorIs(t, o.err, context.Canceled, "cancelled-queued")
	assert.Less(t, o.took, lateness, "cancelled-queued returns at once")
	for _, ch := range inFlight {
		o = <-ch
		require.NoError(t, o.err, "in-flight")
	}
	o = <-follower
	assert.ErrorIs(t, o.err, context.DeadlineExceeded, "gives-up-sent")
	assert.Less(t, o.took, delay+100*time.Millisecond+lateness, "gives-up-sent returns by its deadline")
	o = <-leader
	require.NoError(t, o.err, "leader: its pipeline ran to its own deadline")
	o = <-take(cancelled, "cancelled-idle")
	assert.ErrorIs(t, o.err, context.Canceled, "cancelled-idle")
	proxy.SetDelay(0)

	sent := int64(len(inFlight) + 2)
	assert.Equal(t, sent, counter.takes.Load(), "takes sent: in-flight, leader, gives-up-sent")
	assert.Equal(t, int64(1), counter.pipelines.Load(), "pipelines: leader and gives-up-sent")
	assert.Equal(t, sent, commandCalls(t, checker)["evalsha"], "EVALSHA calls on the server")
	want := map[string]int64{"leader": 1, "gives-up-sent": 1, "expires-queued": 0, "cancelled-queued": 0, "cancelled-idle": 0}
	for i := range inFlight {
		want["in-flight-"+strconv.Itoa(i)] = 1
	}
	for id, want := range want {
		n, err := checker.Exists(bg, keysOf(id)...).Result()
		require.NoError(t, err)
		assert.Equal(t, want, n, "key of %s", id)
	}
}

// TestBatchingAfterScriptFlush: a server that lost its script cache
// answers a pipeline's EVALSHAs NOSCRIPT; those takes, which did not run,
// are sent again with the script, with no error and no take charged twice.
func TestBatchingAfterScriptFlush(t *testing.T) {
	const burst = 100_000
	limits := []core.Limit{core.PerHour(1).WithBurst(burst)}
	bg := context.Background()

	t.Run("between lone pipelined takes", func(t *testing.T) {
		client := batchClients(t, redistest.Dedicated(t), 1)[0]
		var counter takeCounter
		client.AddHook(&counter)
		store, kb := newStore(t, client, redisstore.WithClock(fixedClock()), redisstore.WithBatchingAlone())
		keys := kb.AppendKeys(nil, "client", limits)
		for i := range 3 {
			require.NoError(t, client.ScriptFlush(bg).Err())
			got, err := store.Take(bg, nil, keys, limits, 1)
			require.NoError(t, err)
			assert.Equal(t, int64(burst-1-i), got[0].Remaining, "take %d charged once", i)
		}
		assert.Equal(t, int64(3), counter.noScript.Load(), "NOSCRIPT replies")
		assert.Equal(t, int64(3), commandCalls(t, client)["eval"], "EVAL resends")
	})
	t.Run("during concurrent takes", func(t *testing.T) {
		client := batchClients(t, redistest.Dedicated(t), 1)[0]
		var counter takeCounter
		client.AddHook(&counter)
		store, kb := newStore(t, client, redisstore.WithClock(fixedClock()), redisstore.WithBatching())
		const goroutines, takesEach = 64, 40
		keys := make([][]string, goroutines)
		for g := range keys {
			keys[g] = kb.AppendKeys(nil, "caller-"+strconv.Itoa(g), limits)
		}
		stopFlushing := flushScriptsEveryMillisecond(client)
		var wg sync.WaitGroup
		var failed atomic.Int64
		for g := range goroutines {
			wg.Go(func() {
				for range takesEach {
					if _, err := store.Take(bg, nil, keys[g], limits, 1); err != nil {
						failed.Add(1)
						t.Log(err)
					}
				}
			})
		}
		wg.Wait()
		n := stopFlushing()

		require.Zero(t, failed.Load(), "failed takes")
		for g := range keys {
			got, err := store.Take(bg, nil, keys[g], limits, 0)
			require.NoError(t, err)
			require.Equal(t, int64(burst-takesEach), got[0].Remaining, "caller %d charged once per take", g)
		}
		t.Logf("%d flushes, %d pipelines, %d NOSCRIPT replies in pipelines", n, counter.pipelines.Load(), counter.noScript.Load())
		assert.Positive(t, counter.noScript.Load(), "pipelined takes were answered NOSCRIPT")
	})
	// A pipeline may mix takes and lease releases, two scripts: each one
	// answered NOSCRIPT is sent again with its own script (a release sent
	// as the take script fails on its argument count, a take sent as
	// lease.lua would not be a take).
	t.Run("takes and lease releases mixed", func(t *testing.T) {
		client := batchClients(t, redistest.Dedicated(t), 1)[0]
		var counter takeCounter
		client.AddHook(&counter)
		store, kb := newStore(t, client, redisstore.WithClock(fixedClock()), redisstore.WithBatching())
		leased := append([]core.Limit{}, limits[0], core.Concurrent(1))
		const goroutines, takesEach = 64, 20
		keys := make([][]string, goroutines)
		for g := range keys {
			keys[g] = kb.AppendKeys(nil, "caller-"+strconv.Itoa(g), leased)
		}
		stopFlushing := flushScriptsEveryMillisecond(client)
		var wg sync.WaitGroup
		var failed atomic.Int64
		for g := range goroutines {
			wg.Go(func() {
				for i := range takesEach {
					lease := "lease-" + strconv.Itoa(g) + "-" + strconv.Itoa(i)
					got, err := store.TakeLease(bg, nil, keys[g], leased, 1, lease)
					if err == nil && !got[1].Allowed {
						err = fmt.Errorf("take %d denied: the previous lease was not released", i)
					}
					if err == nil {
						err = store.Release(bg, keys[g][1], leased[1], lease)
					}
					if err != nil {
						failed.Add(1)
						t.Log(err)
					}
				}
			})
		}
		wg.Wait()
		stopFlushing()

		require.Zero(t, failed.Load(), "failed takes or releases")
		for g := range keys {
			got, err := store.Take(bg, nil, keys[g], leased, 0)
			require.NoError(t, err)
			require.Equal(t, int64(burst-takesEach), got[0].Remaining, "caller %d charged once per take", g)
			require.Equal(t, int64(0), got[1].InFlight(), "caller %d: every lease released", g)
		}
		t.Logf("%d pipelines, %d NOSCRIPT replies in pipelines", counter.pipelines.Load(), counter.noScript.Load())
		assert.Positive(t, counter.noScript.Load(), "pipelined calls were answered NOSCRIPT")
	})
}

// TestBatchingFallsBack: on a ring client, or a client with retries
// (standalone, a cluster client whose node clients get its MaxRetries, or
// one whose NewClient gives its node clients retries), WithBatching sends
// takes one by one, says so in the log, and takes work.
func TestBatchingFallsBack(t *testing.T) {
	tests := []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
		log    string
	}{
		{"ring client", func(t *testing.T) redis.UniversalClient {
			ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": redistest.Standalone(t).Addr()}})
			t.Cleanup(func() { _ = ring.Close() })
			return ring
		}, "batching needs a *redis.Client (standalone or failover) or a *redis.ClusterClient"},
		{"client with retries", func(t *testing.T) redis.UniversalClient { return redistest.Standalone(t).Client(t) },
			"batching needs a client without retries"},
		{"cluster client with retries", func(t *testing.T) redis.UniversalClient {
			opts := redistest.Cluster(t).Options()
			opts.MaxRetries = 3
			cc := redis.NewClusterClient(opts)
			t.Cleanup(func() { _ = cc.Close() })
			return cc
		}, "batching needs a client without retries"},
		{"cluster client whose node clients retry", func(t *testing.T) redis.UniversalClient {
			opts := patientClusterOptions(redistest.Cluster(t).Options())
			opts.NewClient = func(o *redis.Options) *redis.Client {
				o.MaxRetries = 2
				return redis.NewClient(o)
			}
			cc := redis.NewClusterClient(opts)
			t.Cleanup(func() { _ = cc.Close() })
			return cc
		}, "batching needs a client without retries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := tt.client(t)
			var logs bytes.Buffer
			store, kb := newStore(t, client, redisstore.WithBatching(), redisstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			var counter takeCounter
			client.AddHook(&counter)
			if cc, ok := client.(*redis.ClusterClient); ok {
				cc.OnNewNode(func(node *redis.Client) { node.AddHook(&counter) })
			}
			limits := []core.Limit{core.PerMinute(5)}
			keys := kb.AppendKeys(nil, "client", limits)

			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					_, err := store.Take(context.Background(), nil, keys, limits, 1)
					assert.NoError(t, err)
				})
			}
			wg.Wait()

			assert.Contains(t, logs.String(), tt.log)
			assert.Zero(t, counter.pipelines.Load(), "pipelines")
			got, err := store.Take(context.Background(), nil, keys, limits, 0)
			require.NoError(t, err)
			assert.Equal(t, int64(0), got[0].Remaining)
		})
	}
}

// TestBatchingIsTheDefault: a store on a client without retries batches
// with no option given; WithoutBatching sends every take alone; a client
// with retries is used one take at a time without a log line (WithBatching
// would log, above); the two options together are an error.
func TestBatchingIsTheDefault(t *testing.T) {
	srv := redistest.Standalone(t)
	burst := func(t *testing.T, client *redis.Client, opts ...redisstore.Option) (pipelines int64, logs string) {
		var buf bytes.Buffer
		opts = append(opts, redisstore.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
		store, kb := newStore(t, client, opts...)
		var counter takeCounter
		client.AddHook(&counter)
		limits := []core.Limit{core.PerSecond(1_000_000)}
		// Enough rounds of 32 concurrent callers that some of them queue
		// behind a call in flight even on a loaded machine: each round
		// starts them together and waits for all.
		for range 20 {
			start := make(chan struct{})
			var wg sync.WaitGroup
			for g := range 32 {
				keys := kb.AppendKeys(nil, "caller-"+strconv.Itoa(g), limits)
				wg.Go(func() {
					<-start
					_, err := store.Take(context.Background(), nil, keys, limits, 1)
					assert.NoError(t, err)
				})
			}
			close(start)
			wg.Wait()
		}
		return counter.pipelines.Load(), buf.String()
	}

	t.Run("default", func(t *testing.T) {
		pipelines, logs := burst(t, batchClients(t, srv, 1)[0])
		assert.Positive(t, pipelines, "pipelines")
		assert.Empty(t, logs)
	})
	t.Run("WithoutBatching", func(t *testing.T) {
		pipelines, logs := burst(t, batchClients(t, srv, 1)[0], redisstore.WithoutBatching())
		assert.Zero(t, pipelines, "pipelines")
		assert.Empty(t, logs)
	})
	t.Run("client with retries", func(t *testing.T) {
		opts := srv.Options()
		opts.MaxRetries = 3
		opts.ContextTimeoutEnabled = true
		client := redis.NewClient(opts)
		t.Cleanup(func() { _ = client.Close() })
		pipelines, logs := burst(t, client)
		assert.Zero(t, pipelines, "pipelines")
		assert.NotContains(t, logs, "batching", "batching was not asked for: nothing to say about it")
	})
	t.Run("both options", func(t *testing.T) {
		_, err := redisstore.New(batchClients(t, srv, 1)[0], redisstore.WithBatching(), redisstore.WithoutBatching())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "WithBatching and WithoutBatching")
	})
}

// flushScriptsEveryMillisecond flushes the server's script cache through
// client every millisecond until the returned stop is called; stop waits
// for the flusher and returns how many flushes succeeded.
func flushScriptsEveryMillisecond(client redis.UniversalClient) (stop func() int64) {
	done := make(chan struct{})
	var flushes atomic.Int64
	var flushing sync.WaitGroup
	flushing.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			if client.ScriptFlush(context.Background()).Err() == nil {
				flushes.Add(1)
			}
		}
	})
	return func() int64 {
		close(done)
		flushing.Wait()
		return flushes.Load()
	}
}
