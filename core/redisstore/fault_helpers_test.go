package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// budget is the decision timeout of the fault tests: the limiter's default.
const budget = core.DefaultTimeout

// A record is one decision of a fault test's traffic.
type record struct {
	limiter  string // the name given to traffic.start
	identity string
	start    time.Duration // since the traffic began
	took     time.Duration
	res      core.Result
	err      error // Take's error: a bug, never expected
	stalled  bool  // the whole process stood still while it was in flight (stallMeter)
}

func (r record) end() time.Duration { return r.start + r.took }

// breakerOpen reports whether the decision was made by the open breaker,
// without a store call.
func (r record) breakerOpen() bool { return errors.Is(r.res.Err, core.ErrBreakerOpen) }

// traffic drives a limiter from one goroutine per identity (hot identities
// get several), each pausing pace between decisions, and records every
// decision. The clock is the test's monotonic clock: the measured durations
// include scheduling delays of the loaded machine, which is what callers
// see.
type traffic struct {
	begin   time.Time
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	recs    []record
	stalls  *stallMeter
	servers []*serverMeter // watchServers
}

// newTraffic returns traffic whose clock starts now; start adds goroutines.
func newTraffic() *traffic {
	begin := time.Now()
	return &traffic{begin: begin, stop: make(chan struct{}), stalls: startStallMeter(begin)}
}

// stallGap is how late a 1 ms sleep must wake up for the stallMeter to
// count a stall. Alone on two cores under -race the meter's wake-ups are
// well under a millisecond late; a loaded CI machine (every package
// testing at once, or another job) stops the whole process for tens of
// milliseconds at a time, and every decision then in flight with it.
const stallGap = 10 * time.Millisecond

// A stallMeter records when this process could not run a goroutine on
// time: its own goroutine sleeps 1 ms at a time and notes every wake-up
// more than stallGap late. A decision that overran a 50 ms deadline while
// the process stood still says nothing about the store; the tests that
// require decisions not to degrade excuse those (and say how many), and
// only those: on a machine that does not stall, nothing is excused.
type stallMeter struct {
	begin time.Time
	stop  chan struct{}
	done  chan struct{}
	spans []span // written by the meter's goroutine until done is closed
}

// A span is an interval of a traffic's clock.
type span struct{ from, to time.Duration }

func startStallMeter(begin time.Time) *stallMeter {
	m := &stallMeter{begin: begin, stop: make(chan struct{}), done: make(chan struct{})}
	go m.run()
	return m
}

func (m *stallMeter) run() {
	defer close(m.done)
	last := time.Now()
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		time.Sleep(time.Millisecond)
		now := time.Now()
		if now.Sub(last) > time.Millisecond+stallGap { // stood still from the wake-up due to now
			m.spans = append(m.spans, span{last.Sub(m.begin) + time.Millisecond, now.Sub(m.begin)})
		}
		last = now
	}
}

// A serverMeter records when a Redis server that the test keeps healthy
// answered slowly: its goroutine PINGs the server every millisecond over a
// connection of its own and notes every round trip longer than stallGap.
// On a loaded machine the servers' processes are starved as well as the
// test's, which the stallMeter cannot see; a decision that overran its
// deadline while a healthy server itself took that long says nothing about
// the failure under test. Tests watch only the servers they expect to stay
// healthy (never the one they freeze, kill or fail over).
type serverMeter struct {
	begin  time.Time
	client *redis.Client
	stop   chan struct{}
	done   chan struct{}
	spans  []span // written by the meter's goroutine until done is closed
}

// watchServers starts a serverMeter for each of addrs; Stop excuses the
// decisions in flight while one of them answered slowly, as it excuses
// those in flight during a stall of the process.
func (tr *traffic) watchServers(addrs ...string) {
	for _, addr := range addrs {
		m := &serverMeter{begin: tr.begin, stop: make(chan struct{}), done: make(chan struct{}),
			client: redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1, MaxRetries: -1, ReadTimeout: 5 * time.Second})}
		tr.servers = append(tr.servers, m)
		go m.run()
	}
}

func (m *serverMeter) run() {
	defer close(m.done)
	defer m.client.Close()
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		sent := time.Now()
		_ = m.client.Ping(context.Background()).Err()
		if took := time.Since(sent); took > stallGap {
			m.spans = append(m.spans, span{sent.Sub(m.begin), sent.Sub(m.begin) + took})
		}
		time.Sleep(time.Millisecond)
	}
}

// end stops the meter and returns the slow answers it saw.
func (m *serverMeter) end() []span {
	close(m.stop)
	<-m.done
	return m.spans
}

// end stops the meter and returns the stalls it saw.
func (m *stallMeter) end() []span {
	close(m.stop)
	<-m.done
	return m.spans
}

// stalledIn reports whether the process stood still for at least stallGap
// in all within [from, to], as spans have it.
func stalledIn(spans []span, from, to time.Duration) bool {
	var total time.Duration
	for _, s := range spans {
		total += max(0, min(s.to, to)-max(s.from, from))
	}
	return total >= stallGap
}

// startTraffic is newTraffic followed by start("", ...).
func startTraffic(l *core.Limiter, identities []string, cost int64, pace time.Duration) *traffic {
	tr := newTraffic()
	tr.start("", l, identities, cost, pace)
	return tr
}

// start runs one goroutine per identity on l (identities may repeat),
// recording its decisions under name.
func (tr *traffic) start(name string, l *core.Limiter, identities []string, cost int64, pace time.Duration) {
	for _, id := range identities {
		tr.wg.Go(func() { tr.loop(name, l, id, cost, pace) })
	}
}

func (tr *traffic) loop(name string, l *core.Limiter, id string, cost int64, pace time.Duration) {
	ctx := context.Background()
	var recs []record
	defer func() {
		tr.mu.Lock()
		tr.recs = append(tr.recs, recs...)
		tr.mu.Unlock()
	}()
	for {
		select {
		case <-tr.stop:
			return
		default:
		}
		start := time.Now()
		res, err := l.Take(ctx, core.Request{Identity: id, Cost: cost})
		recs = append(recs, record{limiter: name, identity: id, start: start.Sub(tr.begin), took: time.Since(start), res: res, err: err})
		if pace > 0 {
			time.Sleep(pace)
		}
	}
}

// warmUp takes once for each identity until the store answers, for at
// most 5 s: the first takes of a new client dial connections, read the
// cluster's slot map and load the script, and may miss a 50 ms deadline on
// a loaded machine. The fault tests measure faults, not cold starts.
func warmUp(t *testing.T, l *core.Limiter, ids []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, id := range ids {
		for {
			res, err := l.Take(context.Background(), core.Request{Identity: id, Cost: 1})
			require.NoError(t, err)
			if !res.Degraded {
				break
			}
			require.True(t, time.Now().Before(deadline), "warm-up: the store does not answer: %v", res.Err)
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// now returns the time since the traffic began.
func (tr *traffic) now() time.Duration { return time.Since(tr.begin) }

// sleepUntil sleeps until d after the traffic began.
func (tr *traffic) sleepUntil(d time.Duration) { time.Sleep(d - tr.now()) }

// Stop stops the traffic and returns its records, by start time, each
// marked stalled when the process stood still, or a watched server
// answered slowly (watchServers), for stallGap or more in all while it was
// in flight.
func (tr *traffic) Stop() []record {
	close(tr.stop)
	tr.wg.Wait()
	stalls := tr.stalls.end()
	for _, m := range tr.servers {
		stalls = append(stalls, m.end()...)
	}
	for i := range tr.recs {
		tr.recs[i].stalled = stalledIn(stalls, tr.recs[i].start, tr.recs[i].end())
	}
	slices.SortFunc(tr.recs, func(a, b record) int { return int(a.start - b.start) })
	return tr.recs
}

// of returns the records of the limiter named name.
func of(recs []record, name string) []record {
	return where(recs, func(r record) bool { return r.limiter == name })
}

// where returns the records for which keep is true.
func where(recs []record, keep func(record) bool) []record {
	var out []record
	for _, r := range recs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// latency summarises the durations of records.
type latency struct {
	n             int
	p50, p99, max time.Duration
}

func latencyOf(recs []record) latency {
	if len(recs) == 0 {
		return latency{}
	}
	ds := make([]time.Duration, len(recs))
	for i, r := range recs {
		ds[i] = r.took
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[int(q*float64(len(ds)-1))] }
	return latency{n: len(ds), p50: at(0.5), p99: at(0.99), max: ds[len(ds)-1]}
}

func (l latency) String() string {
	return "n=" + strconv.Itoa(l.n) + " p50=" + l.p50.Round(10*time.Microsecond).String() +
		" p99=" + l.p99.Round(10*time.Microsecond).String() + " max=" + l.max.Round(10*time.Microsecond).String()
}

// latenessOf summarises by how much the decisions that reached the
// deadline overran it.
func latenessOf(recs []record) latency {
	var late []record
	for _, r := range recs {
		if r.took >= budget {
			r.took -= budget
			late = append(late, r)
		}
	}
	return latencyOf(late)
}

// bugs returns the records whose Take failed: never expected, store
// failures must come back as degraded results.
func bugs(recs []record) []record { return where(recs, func(r record) bool { return r.err != nil }) }

// requireNoBugs stops t if any of recs is an error: a decision the
// limiter could not make, which the middleware would answer with a 500.
// It names the first few, with their errors.
func requireNoBugs(t *testing.T, recs []record, msgAndArgs ...any) {
	t.Helper()
	bad := bugs(recs)
	if len(bad) == 0 {
		return
	}
	var first []string
	for _, r := range bad[:min(len(bad), 5)] {
		first = append(first, fmt.Sprintf("%s (%s) at %s took %s: %v", r.identity, r.limiter, r.start.Round(time.Millisecond), r.took.Round(time.Millisecond), r.err))
	}
	require.Fail(t, fmt.Sprintf("%d of %d takes returned an error; first: %s", len(bad), len(recs), strings.Join(first, "; ")), msgAndArgs...)
}

func degraded(recs []record) []record {
	return where(recs, func(r record) bool { return r.res.Degraded })
}

// assertNoneDegraded fails t if any of recs is degraded, saying how many
// and when the first few started and how long they took (the records
// themselves are too large to print). A degraded decision during a stall
// of the whole process is excused, and counted in the log.
func assertNoneDegraded(t *testing.T, recs []record, msg string) {
	t.Helper()
	bad, excused := unexcused(degraded(recs))
	if excused > 0 {
		t.Logf("%s: %d degraded decisions excused: the process or a healthy server stalled while they were in flight", msg, excused)
	}
	if len(bad) == 0 {
		return
	}
	var first []string
	for _, r := range bad[:min(len(bad), 5)] {
		first = append(first, fmt.Sprintf("%s at %s took %s", r.identity, r.start.Round(time.Millisecond), r.took.Round(time.Millisecond)))
	}
	t.Errorf("%s: %d of %d decisions degraded; first: %s", msg, len(bad), len(recs), strings.Join(first, "; "))
}

// unexcused returns the records of recs that no stall of the process
// overlapped, and how many it left out.
func unexcused(recs []record) ([]record, int) {
	kept := where(recs, func(r record) bool { return !r.stalled })
	return kept, len(recs) - len(kept)
}

// faultLimiter returns a limiter on store with the fault tests' timeout,
// a key prefix of its own whose keys are checked for TTLs when t ends (on
// checker), and opts.
func faultLimiter(t *testing.T, store core.Store, checker redis.UniversalClient, limits []core.Limit, opts ...core.Option) *core.Limiter {
	t.Helper()
	return faultLimiterTimeout(t, budget, store, checker, limits, opts...)
}

// faultLimiterTimeout is faultLimiter with the limiter's timeout.
func faultLimiterTimeout(t *testing.T, timeout time.Duration, store core.Store, checker redis.UniversalClient, limits []core.Limit, opts ...core.Option) *core.Limiter {
	t.Helper()
	prefix := redistest.Prefix(t)
	t.Cleanup(func() { assertKeysExpire(t, checker, prefix) })
	opts = append([]core.Option{core.WithLimits(limits...), core.WithPrefix(prefix), core.WithTimeout(timeout)}, opts...)
	l, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	return l
}

// safeStore returns a store on client, which must have safe settings: New
// would log otherwise, and the test fails. It sends one take per round
// trip (WithoutBatching); batchedSafeStore's batches (the default).
func safeStore(t *testing.T, client redis.Scripter) *redisstore.Store {
	t.Helper()
	return safeStoreWith(t, client, redisstore.WithoutBatching())
}

// batchedSafeStore is safeStore with batching.
func batchedSafeStore(t *testing.T, client redis.Scripter) *redisstore.Store {
	t.Helper()
	return safeStoreWith(t, client, redisstore.WithBatching())
}

func safeStoreWith(t *testing.T, client redis.Scripter, batching redisstore.Option) *redisstore.Store {
	t.Helper()
	require.Empty(t, redisstore.CheckClient(client, budget), "the fault tests use safe clients")
	s, err := redisstore.New(client, batching)
	require.NoError(t, err)
	return s
}

// A storeMode is how a fault test builds the store under test: one take
// per round trip, or batching (the default), where concurrent takes share
// pipelines.
type storeMode struct {
	name    string
	batches bool
	store   func(t *testing.T, client redis.Scripter) *redisstore.Store
}

var (
	oneByOne = storeMode{"one by one", false, safeStore}
	batched  = storeMode{"batched", true, batchedSafeStore}
)

// TestStalledIn checks the rule that excuses a decision: the stalls within
// its interval, clipped to it, add up to stallGap or more.
func TestStalledIn(t *testing.T) {
	ms := time.Millisecond
	stalls := []span{{10 * ms, 22 * ms}, {100 * ms, 106 * ms}, {108 * ms, 114 * ms}}
	for _, tt := range []struct {
		from, to time.Duration
		want     bool
	}{
		{0, 60 * ms, true},          // the whole first stall, 12 ms
		{15 * ms, 60 * ms, false},   // 7 ms of it
		{30 * ms, 90 * ms, false},   // none
		{95 * ms, 120 * ms, true},   // two stalls of 6 ms
		{103 * ms, 120 * ms, false}, // 3 + 6 ms
	} {
		if got := stalledIn(stalls, tt.from, tt.to); got != tt.want {
			t.Errorf("stalledIn(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

// healthyMasters returns the masters that serve the slots of ids, once
// each, leaving out those of the shard under test: the servers a fault
// test expects to stay healthy, for traffic.watchServers.
func healthyMasters(t *testing.T, hc *redistest.HACluster, ids []string, underTest redistest.Shard) []string {
	t.Helper()
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = "{" + id + "}"
	}
	var addrs []string
	for _, s := range hc.Shards(t, hc.Addrs()[0], keys...) {
		if s != underTest && !slices.Contains(addrs, s.Master) {
			addrs = append(addrs, s.Master)
		}
	}
	return addrs
}
