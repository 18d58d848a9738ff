// Package redistest starts throwaway Redis servers for tests: a standalone
// server and a three-master Redis Cluster, both real redis-server processes
// on free loopback ports (never mocks).
//
// Servers are shared by all tests of one test binary: the first call to
// [Standalone] or [Cluster] starts them, and [Main], called from TestMain,
// stops them when the tests are done. [Dedicated] starts a server of its own
// for a test that must observe a quiet server (INFO commandstats).
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		srv := redistest.Standalone(t)
//		client := srv.Client(t) // closed when t ends
//		prefix := redistest.Prefix(t)
//		...
//	}
//
// REDIS_URL (a redis:// URL) and REDIS_CLUSTER_ADDRS (comma-separated
// host:port seeds) point the helpers at existing servers instead. Such
// servers are never flushed, reconfigured or stopped: tests must keep to the
// unique key prefixes of [Prefix].
//
// For fault tests, a test can have processes of its own and break them:
// a [Dedicated] server can be frozen (SIGSTOP), thawed, killed and
// restarted empty on its port; a [Proxy] in front of any server adds
// latency or swallows traffic; [ReplicatedCluster] starts six nodes (three
// masters with a replica each) whose nodes can be killed or failed over;
// [Sentinel] starts a master, a replica and redis-sentinel processes.
//
// A missing redis-server (or, for [Sentinel], redis-sentinel) binary fails
// the test with instructions; only go test -short skips the tests that need
// Redis.
//
// The package keeps the started servers in package-level state, guarded by
// a mutex: that is what "shared per test binary" means. It is for tests only.
package redistest
