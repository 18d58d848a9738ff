package policy_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratelimithttp "github.com/ratelimitkit/ratelimit/adapters/nethttp"
	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/httplimit"
	"github.com/ratelimitkit/ratelimit/core/policy"
)

// A version of the policy of the reload test: fixed windows of one minute
// on a store whose clock stands still, so that a limit admits exactly its
// rate, less what its name counted under earlier versions.
type version struct {
	limits []limitSpec
	header string // the RateLimit-Policy field it answers with
}

type limitSpec struct {
	name string
	rate int64
}

func (v version) doc() string {
	doc := "version: 1\ntiers:\n  default:\n"
	for _, l := range v.limits {
		doc += fmt.Sprintf("    - {name: %s, rate: %d, period: 1m, algorithm: fixed_window}\n", l.name, l.rate)
	}
	return doc
}

// The versions the test goes through. Each keeps some limits and drops or
// adds others; the last brings back b, whose counters (the clock stands
// still) are still in the store.
var reloadVersions = []version{
	{limits: []limitSpec{{"a", 60}, {"b", 40}}, header: `"a";q=60;w=60, "b";q=40;w=60`},
	{limits: []limitSpec{{"a", 100}, {"c", 30}}, header: `"a";q=100;w=60, "c";q=30;w=60`},
	{limits: []limitSpec{{"a", 90}, {"c", 70}, {"d", 50}}, header: `"a";q=90;w=60, "c";q=70;w=60, "d";q=50;w=60`},
	{limits: []limitSpec{{"a", 200}, {"b", 100}}, header: `"a";q=200;w=60, "b";q=100;w=60`},
}

// expectedAdmitted returns, per version, how many requests of one client
// it admits when each version runs until the client is refused: the least,
// over its limits, of the rate less what the limit's name admitted under
// the versions before (each admitted request charged every limit of its
// version, and no counter expires).
func expectedAdmitted(vs []version) []int64 {
	counted := map[string]int64{}
	want := make([]int64, len(vs))
	for i, v := range vs {
		want[i] = -1
		for _, l := range v.limits {
			if left := l.rate - counted[l.name]; want[i] < 0 || left < want[i] {
				want[i] = left
			}
		}
		for _, l := range v.limits {
			counted[l.name] += want[i]
		}
	}
	return want
}

// tally counts the answers per client and version.
type tally struct {
	mu       sync.Mutex
	admitted map[string][]int64 // client -> per version
	denied   map[string][]int64
	unknown  []string // RateLimit-Policy values of no version
	bad      []int    // statuses other than 200 and 429
	total    atomic.Int64
}

func (t *tally) record(client string, status int, header string) {
	t.total.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	v := -1
	for i, ver := range reloadVersions {
		if header == ver.header {
			v = i
		}
	}
	switch {
	case status != http.StatusOK && status != http.StatusTooManyRequests:
		t.bad = append(t.bad, status)
	case v < 0:
		t.unknown = append(t.unknown, header)
	case status == http.StatusOK:
		t.admitted[client][v]++
	default:
		t.denied[client][v]++
	}
}

// exhausted reports whether every client has been refused under version
// v a few times, having been admitted want times.
func (t *tally) exhausted(clients []string, v int, want int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range clients {
		if t.admitted[c][v] < want || t.denied[c][v] < 3 {
			return false
		}
	}
	return true
}

// requestsPerVersion is the least number of requests the reload test
// sends while each version serves.
const requestsPerVersion = 600

// Thousands of requests from many goroutines, through a real router and
// HTTP client, while the policy file changes under a watcher: no 5xx; every
// answer names the limits of one version; each version admits exactly what
// its limits leave after the versions before (the counters of kept names
// carry over, those of new names start from zero); and a bad file, written
// while a version serves, is refused while that version keeps serving.
func TestReloadUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test: several seconds")
	}
	clients := []string{"c0", "c1", "c2", "c3"}
	want := expectedAdmitted(reloadVersions)
	require.Equal(t, []int64{40, 30, 20, 60}, want, "the arithmetic the test rests on")

	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(reloadVersions[0].doc()), 0o644))
	l := frozenLimiter(t, core.WithLimits(core.PerSecond(1))) // replaced by the file at once
	reports := make(chan error, 16)
	w, err := policy.Watch(path, func(p *policy.Policy) error {
		return policy.Apply(p, map[string]*core.Limiter{"": l})
	}, policy.WithReport(func(err error) { reports <- err }), policy.WithSignals(), policy.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, <-reports)

	srv := httptest.NewServer(router(t, l))
	defer srv.Close()
	tl := &tally{admitted: map[string][]int64{}, denied: map[string][]int64{}}
	for _, c := range clients {
		tl.admitted[c] = make([]int64, len(reloadVersions))
		tl.denied[c] = make([]int64, len(reloadVersions))
	}
	stop := load(t, srv.URL, clients, tl)

	for v := range reloadVersions {
		if v > 0 {
			writeAtomic(t, path, reloadVersions[v].doc())
			require.NoError(t, waitReport(t, reports), "version %d applied", v)
		}
		if v == 2 {
			// A bad file while version 2 serves, before its clients are
			// refused: it must keep serving, and admit exactly as many.
			writeAtomic(t, path, reloadVersions[v].doc()+"    - {name: e, rate: 0, period: 1m}\n")
			require.ErrorContains(t, waitReport(t, reports), "Rate must be positive")
		}
		require.Eventually(t, func() bool { return tl.exhausted(clients, v, want[v]) }, time.Minute, 10*time.Millisecond,
			"version %d: every client admitted %d times, then refused", v, want[v])
		// Load before the next change, however slow the machine.
		require.Eventually(t, func() bool { return tl.total.Load() >= int64(requestsPerVersion*(v+1)) }, time.Minute, 10*time.Millisecond)
	}
	stop()

	t.Logf("%d requests", tl.total.Load())
	assert.GreaterOrEqual(t, tl.total.Load(), int64(requestsPerVersion*len(reloadVersions)), "under load")
	assert.Empty(t, tl.bad, "statuses other than 200 and 429")
	assert.Empty(t, tl.unknown, "RateLimit-Policy values of no version, or of a mix")
	for _, c := range clients {
		assert.Equal(t, want, tl.admitted[c], "client %s: admitted per version", c)
	}
}

// router is a ServeMux with one limited route, keyed by X-Client.
func router(t *testing.T, l *core.Limiter) http.Handler {
	t.Helper()
	mux := http.NewServeMux()
	limit := ratelimithttp.New(l, httplimit.WithKey(func(r *http.Request) (string, error) {
		return r.Header.Get("X-Client"), nil
	}))
	mux.Handle("GET /work", limit(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "done")
	})))
	return mux
}

// load sends requests to url/work from 16 goroutines, round robin over
// clients, recording each answer in tl, until the function it returns is
// called (or a bound of 100,000 requests or 3 minutes, so that a failing
// test stops).
func load(t *testing.T, url string, clients []string, tl *tally) (stop func()) {
	const workers = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 10 * time.Second}
	var done atomic.Bool
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Minute)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; !done.Load() && tl.total.Load() < 100_000 && time.Now().Before(deadline); i++ {
				c := clients[i%len(clients)]
				req, _ := http.NewRequest(http.MethodGet, url+"/work", nil)
				req.Header.Set("X-Client", c)
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("request: %v", err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				tl.record(c, resp.StatusCode, resp.Header.Get(httplimit.HeaderRateLimitPolicy))
			}
		}()
	}
	return func() { done.Store(true); wg.Wait(); client.CloseIdleConnections() }
}

// waitReport waits for the watcher's next report.
func waitReport(t *testing.T, reports chan error) error {
	t.Helper()
	select {
	case err := <-reports:
		return err
	case <-time.After(reportWait):
		t.Fatalf("no reload reported within %s", reportWait)
		return nil
	}
}
