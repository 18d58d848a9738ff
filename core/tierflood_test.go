package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/memstore"
	"github.com/ratelimitkit/ratelimit/internal/logtest"
)

// planDB is a TierResolver over a table of plans that counts its calls:
// the plans database of a test. A key it does not know answers unknown
// ("" unless set). fail makes every call fail; gate, when set, holds every
// call until it is closed, whatever the call's context says (a resolver
// that hangs).
type planDB struct {
	mu      sync.Mutex
	plans   map[string]string
	unknown string
	fail    error
	gate    chan struct{}
	calls   map[string]int
	total   int
}

func newPlanDB(plans map[string]string) *planDB {
	return &planDB{plans: plans, calls: map[string]int{}}
}

func (db *planDB) resolve(_ context.Context, key string) (string, error) {
	db.mu.Lock()
	db.calls[key]++
	db.total++
	gate, fail := db.gate, db.fail
	tier, ok := db.plans[key]
	if !ok {
		tier = db.unknown
	}
	db.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return tier, fail
}

func (db *planDB) set(key, tier string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.plans[key] = tier
}

func (db *planDB) failWith(err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.fail = err
}

func (db *planDB) count(key string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.calls[key]
}

func (db *planDB) totalCalls() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.total
}

// tieredAt returns a limiter of a free tier (5 a day) and a pro tier (100
// a day), fixed windows of one limit name in both (a count: an upgrade keeps
// it), over a memory store on clock, asking db for plans with a TTL of 3 s.
func tieredAt(t *testing.T, clock *fakeClock, db *planDB, opts ...core.Option) *core.Limiter {
	t.Helper()
	store, err := memstore.New(memstore.WithClock(clock.Now))
	require.NoError(t, err)
	opts = append([]core.Option{
		core.WithTier("free", core.PerDay(5).WithName("api").WithAlgorithm(core.FixedWindow)),
		core.WithTier("pro", core.PerDay(100).WithName("api").WithAlgorithm(core.FixedWindow)),
		core.WithTierResolver(db.resolve, 3*time.Second, 100),
	}, opts...)
	l, err := core.NewLimiter(store, opts...)
	require.NoError(t, err)
	return l
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)}
}

// The issue-16 flood: one address, denied, sends a new invented API key
// with each request. Before, the resolver ran before the deny cache: 2,000
// requests were 2,000 database calls. The deny cache now answers first:
// the requests until the denial cost one call each, then 8 (the real keys
// of a few customers behind one address may be resolved) and none more
// while the clock stands (one a second otherwise); every one is denied.
func TestDeniedClientInventingKeysCostsTheResolverNothing(t *testing.T) {
	db := newPlanDB(map[string]string{})
	l := tieredAt(t, newFakeClock(), db)
	ctx := context.Background()
	admitted := 0
	for i := range 2000 {
		res, err := l.Take(ctx, core.Request{Identity: "203.0.113.7", TierKey: fmt.Sprint("invented-", i), Cost: 1})
		require.NoError(t, err)
		require.Equal(t, "free", res.Tier)
		if res.Allowed {
			admitted++
		}
	}
	assert.Equal(t, 5, admitted)
	assert.Equal(t, 5+1+8, db.totalCalls(), "5 admitted, the first denied, 8 more; none from the deny cache")
}

// The same flood from many goroutines at once, under -race: whatever the
// interleaving, no more than 5 are admitted, and the resolver is asked a
// handful of times, not once per request.
func TestDeniedClientInventingKeysConcurrently(t *testing.T) {
	db := newPlanDB(map[string]string{})
	l := tieredAt(t, newFakeClock(), db)
	const goroutines, each = 50, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res, err := l.Take(context.Background(), core.Request{Identity: "203.0.113.7", TierKey: fmt.Sprint("invented-", g, "-", i), Cost: 1})
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				admitted += map[bool]int{true: 1}[res.Allowed]
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 5, admitted)
	// Before the first denial is cached, each goroutine may resolve one
	// key: at most 5 admitted + 1 per goroutine.
	assert.LessOrEqual(t, db.totalCalls(), 5+goroutines+8, "of %d requests", goroutines*each)
}

// A denied client is not let out of its denial by a new key of its own
// tier, and a paid upgrade of its key applies within the resolver's TTL
// (3 s here), not when the cached denial's Retry-After (hours) ends. With
// a key of another plan, it gets that plan too.
func TestTierChangeReachesADeniedClientWithinTheResolverTTL(t *testing.T) {
	tests := []struct {
		name    string
		upgrade func(db *planDB) (tierKey string)
	}{
		{"its key is upgraded", func(db *planDB) string { db.set("acme-key", "pro"); return "acme-key" }},
		{"it presents a key of another plan", func(db *planDB) string { db.set("acme-pro-key", "pro"); return "acme-pro-key" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			db := newPlanDB(map[string]string{"acme-key": "free", "acme-key-2": "free"})
			l := tieredAt(t, clock, db)
			ctx := context.Background()
			take := func(tierKey string) core.Result {
				res, err := l.Take(ctx, core.Request{Identity: "acme", TierKey: tierKey, Cost: 1})
				require.NoError(t, err)
				return res
			}
			for range 5 {
				require.True(t, take("acme-key").Allowed)
			}
			denied := take("acme-key")
			require.False(t, denied.Allowed)
			require.Greater(t, denied.Binding().RetryAfter, time.Hour, "a daily quota: the denial is cached for hours")

			key := tt.upgrade(db)
			clock.Advance(500 * time.Millisecond)
			res := take("acme-key-2")
			assert.False(t, res.Allowed, "another key of the same plan: still denied")
			assert.Equal(t, "free", res.Tier)

			clock.Advance(3 * time.Second)
			res = take(key)
			assert.True(t, res.Allowed, "past the TTL the new plan applies")
			assert.Equal(t, "pro", res.Tier)
			assert.Equal(t, int64(100-5-1), res.Binding().Remaining, "the usage of the free tier is kept")
		})
	}
}

// 100 requests missing the same new key at once share one resolver call:
// the first one's, which the others wait for.
func TestConcurrentMissesOfOneKeyShareOneResolverCall(t *testing.T) {
	db := newPlanDB(map[string]string{"new-customer": "pro"})
	db.gate = make(chan struct{})
	l := tieredAt(t, newFakeClock(), db, core.WithTimeout(time.Minute))
	const goroutines = 100
	var wg sync.WaitGroup
	tiers := make([]string, goroutines)
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := l.Take(context.Background(), core.Request{Identity: fmt.Sprint("user-", i), TierKey: "new-customer", Cost: 1})
			assert.NoError(t, err)
			tiers[i] = res.Tier
		}()
	}
	// Let the requests pile up on the held call (those that come later
	// find the answer cached, which proves the same).
	time.Sleep(100 * time.Millisecond)
	close(db.gate)
	wg.Wait()
	assert.Equal(t, 1, db.count("new-customer"))
	for i, tier := range tiers {
		assert.Equal(t, "pro", tier, "request %d", i)
	}
}

// A resolver that hangs, ignoring its context, must not hold the request:
// the limiter's timeout (50 ms here) bounds it, and the request gets the
// default tier with the reason in TierErr. Before, it waited as long as
// the resolver (2 s in the issue; here until the test ends).
func TestAHangingResolverDoesNotHoldTheRequest(t *testing.T) {
	logtest.CaptureDefault(t, slog.LevelWarn) // the failure log
	db := newPlanDB(map[string]string{"acme-key": "pro"})
	db.gate = make(chan struct{})
	t.Cleanup(func() { close(db.gate) })
	l := tieredAt(t, newFakeClock(), db, core.WithTimeout(50*time.Millisecond))
	done := make(chan core.Result, 1)
	go func() {
		res, err := l.Take(context.Background(), core.Request{Identity: "acme", TierKey: "acme-key", Cost: 1})
		assert.NoError(t, err)
		done <- res
	}()
	select {
	case res := <-done:
		assert.True(t, res.Allowed)
		assert.Equal(t, "free", res.Tier, "the default tier")
		assert.Error(t, res.TierErr)
	case <-time.After(10 * time.Second): // generous: the bound is 50 ms
		t.Fatal("the request waited for the hanging resolver")
	}
}

// A flood of invented keys (100,000, into a cache of 100) must not evict a
// customer's cached plan: answers of the default tier live apart. Before,
// the customer's entry went with the first few hundred invented keys, and
// its next request asked the database again. Unknown keys answered "" and
// answered with the default tier's name are both kept apart.
func TestInventedKeysDoNotEvictACustomersPlan(t *testing.T) {
	tests := []struct {
		name    string
		unknown string
	}{
		{`unknown keys answer ""`, ""},
		{`unknown keys answer the default tier`, "free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newPlanDB(map[string]string{"acme-key": "pro"})
			db.unknown = tt.unknown
			l := tieredAt(t, newFakeClock(), db)
			ctx := context.Background()
			res, err := l.Take(ctx, core.Request{Identity: "acme", TierKey: "acme-key", Cost: 1})
			require.NoError(t, err)
			require.Equal(t, "pro", res.Tier)
			for i := range 100_000 {
				_, err := l.Take(ctx, core.Request{Identity: fmt.Sprint("bot-", i%1000), TierKey: fmt.Sprint("invented-", i), Cost: 0})
				require.NoError(t, err)
			}
			res, err = l.Take(ctx, core.Request{Identity: "acme", TierKey: "acme-key", Cost: 1})
			require.NoError(t, err)
			assert.Equal(t, "pro", res.Tier)
			assert.Equal(t, 1, db.count("acme-key"), "still cached")
		})
	}
}

var errPlansDown = errors.New("plans database down")
