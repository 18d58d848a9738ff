package redisstore_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelimitkit/ratelimit/core"
	"github.com/ratelimitkit/ratelimit/core/redisstore"
	"github.com/ratelimitkit/ratelimit/internal/redistest"
)

// takeErr runs one take of one GCRA limit on client for the key
// <prefix>:{id}:k under ctx and returns its error.
func takeErr(ctx context.Context, t *testing.T, client redis.Scripter, keys ...string) error {
	t.Helper()
	store, err := redisstore.New(client, redisstore.WithLogger(nil))
	require.NoError(t, err)
	if len(keys) == 0 {
		keys = []string{redistest.Prefix(t) + ":{id}:k"}
	}
	limits := make([]core.Limit, len(keys))
	for i := range limits {
		limits[i] = core.PerMinute(10).WithName("l" + strconv.Itoa(i))
	}
	_, err = store.Take(ctx, nil, keys, limits, 1)
	return err
}

// safeClient returns a client with safe settings for addr, closed when t
// ends.
func safeClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redisstore.NewClient(&redis.Options{Addr: addr, MinIdleConns: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// config sets a server configuration parameter through c.
func config(t *testing.T, c *redis.Client, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		require.NoError(t, c.ConfigSet(context.Background(), kv[i], kv[i+1]).Err(), "CONFIG SET %s", kv[i])
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// errorCase produces a real error of a take and says what it means.
type errorCase struct {
	name string
	take func(t *testing.T) error
	// unavailable: Redis cannot answer now (wraps core.ErrStoreUnavailable);
	// otherwise the error is a bug and must not wrap it.
	unavailable bool
	// is, when set, must stay reachable with errors.Is.
	is error
	// contains, when set, is in the error's text.
	contains string
}

var errorCases = []errorCase{
	{name: "connection refused", unavailable: true, contains: "connection refused",
		take: func(t *testing.T) error { return takeErr(context.Background(), t, safeClient(t, closedPort(t))) }},
	{name: "deadline on a frozen server", unavailable: true, contains: "i/o timeout",
		take: func(t *testing.T) error {
			srv := redistest.Dedicated(t)
			client := safeClient(t, srv.Addr())
			require.NoError(t, client.Ping(context.Background()).Err())
			srv.Freeze(t)
			defer srv.Thaw(t)
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			return takeErr(ctx, t, client)
		}},
	{name: "caller canceled", unavailable: true, is: context.Canceled,
		take: func(t *testing.T) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return takeErr(ctx, t, safeClient(t, redistest.Standalone(t).Addr()))
		}},
	{name: "pool timeout", unavailable: true, is: redis.ErrPoolTimeout,
		take: func(t *testing.T) error {
			client := redis.NewClient(&redis.Options{Addr: redistest.Standalone(t).Addr(), PoolSize: 1,
				PoolTimeout: 20 * time.Millisecond, MaxRetries: -1, ContextTimeoutEnabled: true})
			t.Cleanup(func() { _ = client.Close() })
			held := client.Conn() // takes the only connection
			defer held.Close()
			require.NoError(t, held.Ping(context.Background()).Err())
			return takeErr(context.Background(), t, client)
		}},
	{name: "connection closed by the server", unavailable: true, is: io.EOF,
		take: func(t *testing.T) error { return takeErr(context.Background(), t, safeClient(t, fakeRedis(t, ""))) }},
	{name: "closed client", unavailable: true, is: redis.ErrClosed,
		take: func(t *testing.T) error {
			client := safeClient(t, redistest.Standalone(t).Addr())
			require.NoError(t, client.Close())
			return takeErr(context.Background(), t, client)
		}},
	{name: "READONLY (a replica)", unavailable: true, contains: "READONLY",
		take: func(t *testing.T) error {
			master, replica := redistest.Dedicated(t), redistest.Dedicated(t)
			host, port, _ := net.SplitHostPort(master.Addr())
			require.NoError(t, replica.Client(t).ReplicaOf(context.Background(), host, port).Err())
			return takeErr(context.Background(), t, safeClient(t, replica.Addr()))
		}},
	{name: "MASTERDOWN (a replica without its master)", unavailable: true, contains: "MASTERDOWN",
		take: func(t *testing.T) error {
			replica := redistest.Dedicated(t)
			admin := replica.Client(t)
			config(t, admin, "replica-serve-stale-data", "no")
			host, port, _ := net.SplitHostPort(closedPort(t))
			require.NoError(t, admin.ReplicaOf(context.Background(), host, port).Err())
			return takeErr(context.Background(), t, safeClient(t, replica.Addr()))
		}},
	{name: "NOREPLICAS (min-replicas-to-write)", unavailable: true, contains: "NOREPLICAS",
		take: func(t *testing.T) error {
			srv := redistest.Dedicated(t)
			config(t, srv.Client(t), "min-replicas-to-write", "1")
			return takeErr(context.Background(), t, safeClient(t, srv.Addr()))
		}},
	{name: "OOM (maxmemory)", unavailable: true, contains: "OOM",
		take: func(t *testing.T) error {
			srv := redistest.Dedicated(t)
			config(t, srv.Client(t), "maxmemory", "1", "maxmemory-policy", "noeviction")
			return takeErr(context.Background(), t, safeClient(t, srv.Addr()))
		}},
	{name: "max number of clients reached", unavailable: true,
		take: func(t *testing.T) error {
			srv := redistest.Dedicated(t)
			config(t, srv.Client(t), "maxclients", "1")
			return takeErr(context.Background(), t, safeClient(t, srv.Addr()))
		}},
	{name: "BUSY (another script runs)", unavailable: true, contains: "BUSY",
		take: func(t *testing.T) error {
			srv := redistest.Dedicated(t)
			admin := srv.Client(t)
			config(t, admin, "busy-reply-threshold", "10")
			blocker := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: -1})
			t.Cleanup(func() { _ = blocker.Close() })
			var wg sync.WaitGroup
			wg.Go(func() { _ = blocker.Eval(context.Background(), "while true do end", nil).Err() })
			defer wg.Wait()
			defer func() { _ = admin.ScriptKill(context.Background()).Err() }()
			time.Sleep(100 * time.Millisecond)
			return takeErr(context.Background(), t, safeClient(t, srv.Addr()))
		}},
	{name: "CLUSTERDOWN (a slot nobody serves)", unavailable: true, contains: "CLUSTERDOWN",
		take: func(t *testing.T) error {
			return takeErr(context.Background(), t, safeClient(t, redistest.UnassignedClusterNode(t).Addr()))
		}},
	{name: "LOADING (simulated reply)", unavailable: true, contains: "LOADING",
		take: func(t *testing.T) error {
			return takeErr(context.Background(), t, safeClient(t, fakeRedis(t, "-LOADING Redis is loading the dataset in memory")))
		}},
	{name: "TRYAGAIN (simulated reply)", unavailable: true, contains: "TRYAGAIN",
		take: func(t *testing.T) error {
			return takeErr(context.Background(), t, safeClient(t, fakeRedis(t, "-TRYAGAIN Multiple keys request during rehashing of slot")))
		}},
	{name: "MISCONF (simulated reply)", unavailable: true, contains: "MISCONF",
		take: func(t *testing.T) error {
			return takeErr(context.Background(), t, safeClient(t, fakeRedis(t, "-MISCONF Errors writing to the AOF file")))
		}},
	{name: "WRONGTYPE", contains: "WRONGTYPE",
		take: func(t *testing.T) error {
			client := safeClient(t, redistest.Standalone(t).Addr())
			key := redistest.Prefix(t) + ":{id}:k"
			require.NoError(t, client.HSet(context.Background(), key, "f", "v").Err())
			require.NoError(t, client.PExpire(context.Background(), key, time.Minute).Err())
			return takeErr(context.Background(), t, client, key)
		}},
	{name: "script error (corrupt state)", contains: "user_script",
		take: func(t *testing.T) error {
			client := safeClient(t, redistest.Standalone(t).Addr())
			key := redistest.Prefix(t) + ":{id}:k"
			require.NoError(t, client.Set(context.Background(), key, "not a number", time.Minute).Err())
			return takeErr(context.Background(), t, client, key)
		}},
	{name: "CROSSSLOT", contains: "CROSSSLOT",
		take: func(t *testing.T) error {
			client := redisstore.NewClusterClient(redistest.Cluster(t).Options())
			t.Cleanup(func() { _ = client.Close() })
			prefix := redistest.Prefix(t)
			return takeErr(context.Background(), t, client, prefix+":{a}:k", prefix+":{b}:k")
		}},
	{name: "MOVED (a standalone client on a cluster)", contains: "MOVED",
		take: func(t *testing.T) error {
			addrs := redistest.Cluster(t).Addrs()
			client := safeClient(t, addrs[0])
			// Keys of 16 hash tags: some live on another master.
			var err error
			for i := 0; i < 16 && err == nil; i++ {
				err = takeErr(context.Background(), t, client, redistest.Prefix(t)+":{"+strconv.Itoa(i)+"}:k")
			}
			return err
		}},
	{name: "NOAUTH (password not set)", contains: "NOAUTH",
		take: func(t *testing.T) error {
			srv := redistest.Dedicated(t)
			config(t, srv.Client(t), "requirepass", "secret")
			return takeErr(context.Background(), t, safeClient(t, srv.Addr()))
		}},
	{name: "invalid argument", contains: "negative cost",
		take: func(t *testing.T) error {
			store, err := redisstore.New(safeClient(t, redistest.Standalone(t).Addr()), redisstore.WithLogger(nil))
			require.NoError(t, err)
			_, err = store.Take(context.Background(), nil, []string{"k"}, []core.Limit{core.PerSecond(1)}, -1)
			return err
		}},
}

// TestTakeErrorClassification produces each error for real (closed ports,
// frozen and misconfigured servers, wrong key types, a cluster) where
// possible, and from a simulated server where Redis cannot be made to
// answer it on demand, and checks that exactly the errors that mean "Redis
// cannot answer now" wrap core.ErrStoreUnavailable, keeping the original
// error reachable.
func TestTakeErrorClassification(t *testing.T) {
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.take(t)

			require.Error(t, err)
			t.Logf("%v", err)
			assert.True(t, strings.HasPrefix(err.Error(), "ratelimit: redis take: "), "prefix of %q", err)
			assert.Equal(t, tt.unavailable, errors.Is(err, core.ErrStoreUnavailable), "unavailable")
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			if tt.contains != "" {
				assert.ErrorContains(t, err, tt.contains)
			}
		})
	}
}

// TestLimiterFailsOpenOnlyWhenRedisIsUnavailable: through a limiter, an
// unreachable Redis gives a degraded, admitted result, while a bug
// (WRONGTYPE) is Take's error.
func TestLimiterFailsOpenOnlyWhenRedisIsUnavailable(t *testing.T) {
	down, err := redisstore.New(safeClient(t, closedPort(t)))
	require.NoError(t, err)
	client := safeClient(t, redistest.Standalone(t).Addr())
	up, err := redisstore.New(client)
	require.NoError(t, err)
	ctx := context.Background()

	res, err := core.MustNewLimiter(down, core.WithLimits(core.PerSecond(1))).Allow(ctx, "id")
	require.NoError(t, err)
	assert.True(t, res.Degraded && res.Allowed, "fail open")
	assert.ErrorIs(t, res.Err, core.ErrStoreUnavailable)

	prefix := redistest.Prefix(t)
	l := core.MustNewLimiter(up, core.WithLimits(core.PerSecond(1)), core.WithPrefix(prefix))
	kb, err := core.NewKeyBuilder(prefix)
	require.NoError(t, err)
	key := kb.AppendKeys(nil, "id", []core.Limit{core.PerSecond(1)})[0]
	require.NoError(t, client.HSet(ctx, key, "f", "v").Err())
	require.NoError(t, client.PExpire(ctx, key, time.Minute).Err())
	_, err = l.Allow(ctx, "id")
	assert.ErrorContains(t, err, "WRONGTYPE")
}

// fakeRedis starts a TCP server that speaks just enough RESP for go-redis
// to connect (it rejects HELLO, so the client falls back to RESP2, and
// accepts CLIENT): every other command gets reply, a RESP error line, or,
// when reply is empty, a closed connection. It is for replies Redis cannot
// be made to give on demand. It stops when t ends.
func fakeRedis(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serveFake(conn, reply) })
		}
	})
	return ln.Addr().String()
}

func serveFake(conn net.Conn, reply string) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		cmd, err := readCommand(r)
		if err != nil {
			return
		}
		var out string
		switch strings.ToUpper(cmd[0]) {
		case "HELLO":
			out = "-ERR unknown command 'HELLO'"
		case "CLIENT", "PING":
			out = "+OK"
		default:
			if reply == "" {
				return
			}
			out = reply
		}
		if _, err := io.WriteString(conn, out+"\r\n"); err != nil {
			return
		}
	}
}

// readCommand reads one RESP array of bulk strings, as clients send them.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := readLength(r, '*')
	if err != nil || n < 1 {
		return nil, errors.Join(err, errors.New("fake redis: empty command"))
	}
	args := make([]string, n)
	for i := range args {
		l, err := readLength(r, '$')
		if err != nil {
			return nil, err
		}
		buf := make([]byte, l+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:l])
	}
	return args, nil
}

func readLength(r *bufio.Reader, kind byte) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 3 || line[0] != kind {
		return 0, errors.New("fake redis: unexpected " + strconv.Quote(line))
	}
	return strconv.Atoi(strings.TrimSpace(line[1:]))
}
