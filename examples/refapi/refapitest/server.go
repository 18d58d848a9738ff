package refapitest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// A RunFunc is examples/production's run with one framework: it serves the
// reference API on ln, configured by getenv and logging to logger, until
// ctx is done; then it stops accepting, drains the requests in flight and
// returns nil. A bad configuration is an error before it serves.
type RunFunc = func(ctx context.Context, ln net.Listener, getenv func(string) string, logger *slog.Logger) error

// exitWithin is how long a server may take to return once cancelled.
const exitWithin = 10 * time.Second

// RunServer checks what main adds to the handler: the real work of
// /api/export, the store chosen by the environment and named in the
// start-up log, /metrics (never limited), the failure modes with Redis
// down, the graceful shutdown, and TRUSTED_PROXIES. The Redis-down cases
// point at closed ports; one case starts a Redis Cluster (the caller's
// TestMain runs redistest.Main), skipped under go test -short.
func RunServer(t *testing.T, run RunFunc) {
	t.Run("memory store: serves, then drains a request in flight and returns nil", func(t *testing.T) {
		runDrain(t, run)
	})
	t.Run("a request that outlives the drain is cut off, and run still returns nil", func(t *testing.T) {
		runStuckRequest(t, run)
	})
	t.Run("redis down: the log names it, the API fails open, login falls back to local limits", func(t *testing.T) {
		runRedisDown(t, run)
	})
	t.Run("bad configuration fails before serving", func(t *testing.T) {
		runBadConfig(t, run)
	})
	t.Run("behind a proxy: TRUSTED_PROXIES keeps clients apart; without it they share a quota and the log says so", func(t *testing.T) {
		runBehindProxy(t, run)
	})
	t.Run("a Redis Cluster that requires full coverage: the start-up log warns", func(t *testing.T) {
		runFullCoverage(t, run)
	})
	t.Run("POLICY_FILE: the limiters take the file's tiers", func(t *testing.T) {
		runPolicyFile(t, run)
	})
}

// runPolicyFile serves with POLICY_FILE naming a policy whose free tier
// admits 42 a second: the answers say so; a file that fails stops the start.
func runPolicyFile(t *testing.T, run RunFunc) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	doc := "version: 1\nlimiters:\n" +
		"  api: {tiers: {free: [{name: burst, rate: 42, period: 1s, burst: 100}]}}\n" +
		"  login: {tiers: {default: [{name: login, rate: 5, period: 1m, algorithm: sliding_log}]}}\n" +
		"  hook: {tiers: {default: [{name: webhook, rate: 100, period: 10s, algorithm: sliding_window}]}}\n" +
		"  export: {tiers: {default: [{name: export, rate: 2, algorithm: concurrency}]}}\n"
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	s := start(t, run, map[string]string{"POLICY_FILE": path})
	hello := s.get(t, "/api/hello")
	assert.Equal(t, http.StatusOK, hello.StatusCode)
	assert.Equal(t, `"burst";q=42;w=1`, hello.Header.Get("RateLimit-Policy"))
	assert.Contains(t, s.log.String(), "policy applied")
	s.cancel()
	require.NoError(t, s.wait(t, exitWithin))

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("version: 1\n"), 0o644))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	err = run(context.Background(), ln, func(name string) string { return map[string]string{"POLICY_FILE": bad}[name] }, slog.New(slog.DiscardHandler))
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad+":1: limiters: missing")
}

// runFullCoverage starts the server on a cluster with Redis's default
// cluster-require-full-coverage yes, under which one dead master stops
// every client: the start-up log must say so.
func runFullCoverage(t *testing.T, run RunFunc) {
	cluster := redistest.DedicatedCluster(t)
	s := start(t, run, map[string]string{"REDIS_CLUSTER_ADDRS": strings.Join(cluster.Addrs(), ",")})
	assert.Equal(t, http.StatusOK, s.get(t, "/healthz").StatusCode)
	log := s.log.String() // start-up is over: the server answers
	assert.Contains(t, log, "cluster-require-full-coverage is yes on")
	assert.Contains(t, log, "set it to no")
	assert.NotContains(t, log, "redis unreachable")
	s.cancel()
	require.NoError(t, s.wait(t, exitWithin))
}

func runDrain(t *testing.T, run RunFunc) {
	s := start(t, run, nil)
	assert.Equal(t, http.StatusOK, s.get(t, "/healthz").StatusCode)
	assert.Equal(t, http.StatusOK, s.get(t, "/api/hello").StatusCode)
	export := s.get(t, "/api/export") // the real work: about 300 ms
	assert.Equal(t, http.StatusOK, export.StatusCode)
	assert.JSONEq(t, `{"status":"exported"}`, export.body)
	assert.Equal(t, `"export";q=2;qu="concurrency"`, export.Header.Get("RateLimit-Policy"))
	metrics := s.get(t, "/metrics")
	assert.Equal(t, http.StatusOK, metrics.StatusCode)
	assert.Contains(t, metrics.body, `ratelimit_requests_total{`)
	assert.Contains(t, metrics.body, `limiter="api",result="allowed"`)
	assert.Contains(t, metrics.body, `limiter="export",result="allowed"`)
	assert.Contains(t, s.log.String(), `store="memory store"`)

	// /metrics is never limited: not even for a client whose API quota is
	// spent, so a scraper behind the same address as clients keeps working.
	limited := false
	for i := 0; i < 900 && !limited; i++ {
		limited = s.get(t, "/api/hello").StatusCode == http.StatusTooManyRequests
	}
	require.True(t, limited, "precondition: the client's free tier is spent")
	for i := range 120 {
		m := s.get(t, "/metrics")
		require.Equal(t, http.StatusOK, m.StatusCode, "scrape %d", i+1)
		require.Empty(t, m.Header.Get("RateLimit-Policy"), "scrape %d: no limiter on /metrics", i+1)
	}

	// Expect: 100-continue makes the server say when the handler (the
	// login limiter's key function) starts reading the body: from then on
	// the request is in flight.
	conn, err := net.Dial("tcp", s.addr)
	require.NoError(t, err)
	defer conn.Close()
	body := loginJSON(account, password)
	_, err = fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body))
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	cont, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusContinue, cont.StatusCode)

	cancelled := time.Now()
	s.cancel()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", s.addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, 10*time.Millisecond, "still accepting after cancel")
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		t.Fatalf("returned with a request in flight: %v", err)
	default:
	}

	_, err = io.WriteString(conn, body)
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the request in flight completes")
	assert.JSONEq(t, `{"message":"welcome"}`, string(got))
	assert.True(t, resp.Close, "and its connection is closed")
	require.NoError(t, s.wait(t, exitWithin-time.Since(cancelled)))
}

// runStuckRequest holds a request in flight past the drain (its body never
// comes): run must cut it off and return nil within exitWithin of the
// cancel, so that the process exits 0 before a supervisor's SIGKILL.
func runStuckRequest(t *testing.T, run RunFunc) {
	s := start(t, run, nil)
	conn, err := net.Dial("tcp", s.addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /login HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\n"+
		"Content-Length: 100\r\nExpect: 100-continue\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	cont, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusContinue, cont.StatusCode, "the handler is reading the body: the request is in flight")

	cancelled := time.Now()
	s.cancel()
	require.NoError(t, s.wait(t, exitWithin))
	t.Logf("returned %s after the cancel", time.Since(cancelled).Round(time.Millisecond))
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	_, err = br.ReadByte()
	assert.Error(t, err, "the stuck request's connection is closed")
	assert.Contains(t, s.log.String(), "requests outlived the drain")
}

func runRedisDown(t *testing.T, run RunFunc) {
	p1, p2 := closedPort(t), closedPort(t)
	tests := []struct {
		name  string
		env   map[string]string
		store string
	}{
		{"standalone", map[string]string{"REDIS_URL": "redis://127.0.0.1:" + p1 + "/0"}, "redis 127.0.0.1:" + p1},
		{"cluster", map[string]string{"REDIS_CLUSTER_ADDRS": "127.0.0.1:" + p1 + ", 127.0.0.1:" + p2},
			"redis cluster 127.0.0.1:" + p1 + ",127.0.0.1:" + p2},
		{"sentinel", map[string]string{"REDIS_SENTINEL_ADDRS": "127.0.0.1:" + p1, "REDIS_SENTINEL_MASTER": "mymaster"},
			"redis sentinel master mymaster via 127.0.0.1:" + p1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, run, tt.env)
			assert.Equal(t, http.StatusOK, s.get(t, "/healthz").StatusCode)
			assert.Equal(t, http.StatusOK, s.get(t, "/api/hello").StatusCode, "fail open")
			require.Equal(t, http.StatusOK, s.login(t, password).StatusCode, "signing in")
			for i := range 5 {
				require.Equal(t, http.StatusUnauthorized, s.login(t, "guess").StatusCode, "failed login %d", i+1)
			}
			assert.Equal(t, http.StatusTooManyRequests, s.login(t, "guess").StatusCode,
				"the local fallback still guards login, counting only the failures")
			log := s.log.String()
			assert.Contains(t, log, fmt.Sprintf("store=%q", tt.store))
			assert.Contains(t, log, "redis unreachable")
			assert.Contains(t, s.get(t, "/metrics").body, `limiter="api",result="degraded_allowed"`)
			s.cancel()
			require.NoError(t, s.wait(t, exitWithin))
		})
	}
}

func runBadConfig(t *testing.T, run RunFunc) {
	tests := []struct {
		name string
		env  map[string]string
		want []string // in the error
	}{
		{"TRUSTED_PROXIES not CIDRs", map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8, 10.1.2.3"}, []string{"TRUSTED_PROXIES"}},
		{"REDIS_URL not a Redis URL", map[string]string{"REDIS_URL": "http://127.0.0.1:6379"}, []string{"REDIS_URL"}},
		{"two Redis set-ups", map[string]string{"REDIS_URL": "redis://127.0.0.1:6379", "REDIS_CLUSTER_ADDRS": "127.0.0.1:7000"},
			[]string{"REDIS_URL", "REDIS_CLUSTER_ADDRS"}},
		{"sentinels without a master", map[string]string{"REDIS_SENTINEL_ADDRS": "127.0.0.1:26379"}, []string{"REDIS_SENTINEL_MASTER"}},
		{"a master without sentinels", map[string]string{"REDIS_SENTINEL_MASTER": "mymaster"}, []string{"REDIS_SENTINEL_ADDRS"}},
		// Set but listing no address: not "no Redis", where each node
		// would keep its own limits in memory without a word.
		{"REDIS_CLUSTER_ADDRS a comma", map[string]string{"REDIS_CLUSTER_ADDRS": ","}, []string{"REDIS_CLUSTER_ADDRS", "lists no address"}},
		{"REDIS_CLUSTER_ADDRS a blank", map[string]string{"REDIS_CLUSTER_ADDRS": " "}, []string{"REDIS_CLUSTER_ADDRS", "lists no address"}},
		{"REDIS_SENTINEL_ADDRS a comma", map[string]string{"REDIS_SENTINEL_ADDRS": ","}, []string{"REDIS_SENTINEL_ADDRS", "lists no address"}},
		{"REDIS_SENTINEL_ADDRS a comma, with a master", map[string]string{"REDIS_SENTINEL_ADDRS": " , ", "REDIS_SENTINEL_MASTER": "mymaster"},
			[]string{"REDIS_SENTINEL_ADDRS", "lists no address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := start(t, run, tt.env).wait(t, exitWithin)
			require.Error(t, err)
			for _, want := range tt.want {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// runBehindProxy sends the logins of two clients through a proxy on
// loopback that names them in X-Forwarded-For: one guesses until denied,
// then the other signs in. With the proxy trusted, the second has its own
// quota; without, both are the proxy, so the second is denied with the
// first, and the key function warns once on slog's default logger, where
// main's logger writes.
func runBehindProxy(t *testing.T, run RunFunc) {
	const warning = "keyfunc.PeerIP keys by the peer address"
	tests := []struct {
		name   string
		env    map[string]string
		second int // the status of the second client's login
		warns  bool
	}{
		{"TRUSTED_PROXIES names the proxy", map[string]string{"TRUSTED_PROXIES": "127.0.0.0/8, ::1/128"}, http.StatusOK, false},
		{"no TRUSTED_PROXIES", nil, http.StatusTooManyRequests, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var defaultLog syncBuffer
			old := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&defaultLog, nil)))
			t.Cleanup(func() { slog.SetDefault(old) })
			s := start(t, run, tt.env)

			for i := range 5 {
				require.Equal(t, http.StatusUnauthorized, s.loginFrom(t, ipA, "guess").StatusCode, "failed login %d", i+1)
			}
			require.Equal(t, http.StatusTooManyRequests, s.loginFrom(t, ipA, "guess").StatusCode, "the guessing client")
			assert.Equal(t, tt.second, s.loginFrom(t, ipB, password).StatusCode, "another client behind the proxy")
			if tt.warns {
				assert.Equal(t, 1, strings.Count(defaultLog.String(), warning), "once:\n%s", defaultLog.String())
			} else {
				assert.NotContains(t, defaultLog.String(), warning)
				assert.NotContains(t, defaultLog.String(), "outside the trusted prefixes")
			}
			assert.NotContains(t, defaultLog.String(), ipA, "no client address in the log")
			s.cancel()
			require.NoError(t, s.wait(t, exitWithin))
		})
	}
}

// A server is a run in progress.
type server struct {
	addr   string
	log    *syncBuffer
	cancel context.CancelFunc
	done   chan error
	client *http.Client
}

// start runs run on a free loopback port with env as its whole
// environment; the test's end cancels it and waits for it.
func start(t *testing.T, run RunFunc, env map[string]string) *server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{addr: ln.Addr().String(), log: &syncBuffer{}, cancel: cancel, done: make(chan error, 1),
		client: &http.Client{Timeout: exitWithin}}
	logger := slog.New(slog.NewTextHandler(s.log, nil))
	go func() { s.done <- run(ctx, ln, func(name string) string { return env[name] }, logger) }()
	t.Cleanup(func() {
		cancel()
		s.client.CloseIdleConnections()
		select {
		case <-s.done:
		case <-time.After(exitWithin):
			t.Errorf("run did not return within %s of the test's end", exitWithin)
		}
	})
	return s
}

// wait returns run's error, failing the test if it takes longer than d.
func (s *server) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(d):
		t.Fatalf("run did not return within %s", d)
		return nil
	}
}

type response struct {
	*http.Response
	body string
}

func (s *server) get(t *testing.T, path string) response {
	t.Helper()
	return s.do(t, http.MethodGet, path, "")
}

func (s *server) login(t *testing.T, pw string) response {
	t.Helper()
	return s.do(t, http.MethodPost, "/login", loginJSON(account, pw))
}

// loginFrom is a login of client, as a proxy on loopback sends it.
func (s *server) loginFrom(t *testing.T, client, pw string) response {
	t.Helper()
	return s.do(t, http.MethodPost, "/login", loginJSON(account, pw), "X-Forwarded-For", client)
}

// do sends a request with body and the header fields given as name, value
// pairs.
func (s *server) do(t *testing.T, method, path, body string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.addr+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{resp, string(b)}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	return port
}

// syncBuffer is a bytes.Buffer the server writes its log to while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
