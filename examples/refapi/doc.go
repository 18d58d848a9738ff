// Package refapi is the reference API, written once: the production
// template that examples/production serves with the framework of your
// choice and that `make demo` (cmd/demo) drives.
//
//	GET  /api/hello          tiered by X-API-Key: no or unknown key -> "free" per client IP
//	                         (burst 100, 10/s), pro-demo-key -> "pro" (1000, 100/s),
//	                         enterprise-demo-key -> "enterprise" (10000, 1000/s);
//	                         plus a daily quota per tier (two limits, taken together)
//	POST /login              brute-force guard: 5 failed logins per minute per
//	                         (account + IP); successful logins are not counted;
//	                         the body is JSON, {"account": "alice", "password": "..."}
//	POST /webhooks/{source}  100 per 10 s per source, sliding window
//	                         (no boundary burst; for bursty senders docs/algorithms.md
//	                         recommends GCRA with a large burst)
//	GET  /api/export         about 300 ms of work, at most 2 in flight per client
//	                         (API key or IP, as /api/hello), whatever the tier
//	GET  /healthz, /metrics  never limited
//
// Where to start: [New] builds the four limiters (policy.go: tiers by API
// key with a cached resolver, a login guard that falls back to local limits
// when Redis is down, metrics per limiter); [OpenStore] picks the store from
// the environment (store.go: Redis, Cluster or Sentinel, else memory); one
// small file per framework mounts them ([Gin], [Echo], [Chi], [NetHTTP]);
// handlers.go stands in for your handlers. The package refapitest runs the
// same scenarios through every one of those routers. policy.yaml describes
// the four limiters' tiers as the code builds them: given as
// [Config.PolicyFile] (POLICY_FILE in examples/production), a file like
// it replaces them while the service runs.
package refapi
