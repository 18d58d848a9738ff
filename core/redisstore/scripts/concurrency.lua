-- concurrency.lua: concurrency (in-flight) limit, one limit
-- (docs/algorithms.md, "Concurrency"): the body of a take of one
-- concurrency limit, which take runs (how, and the locals it reads:
-- common.lua; there is no one-limit program of it). rate is the most
-- leases in flight, period the lease TTL (µs), lease the take's lease id;
-- the capacity is the rate.
-- State: key is a sorted set of lease ids scored by their expiry in µs. A
-- lease is live while now < its score: evaluating drops the scores in
-- [TOMBSTONE / 2, now] first (even when nothing is charged; that changes no
-- decision). Any cost above zero takes one lease, so the limit is never
-- "cost too high". The key expires with its newest lease. lease.lua
-- releases and renews leases.
--
-- The set also holds tombstones: "~" and the id of a lease released before
-- its take ran (lease.lua), scored by their expiry + TOMBSTONE, below every
-- lease; a take of that lease while its tombstone lives holds nothing, so a
-- release never loses a race to the take it undoes. lease.lua drops the
-- expired ones when it writes a tombstone.

-- MAX_LEASE_RETRY caps the retry of a denial (core.ConcurrencyRetryAfter):
-- leases are usually released long before they expire.
local MAX_LEASE_RETRY = 1000000
-- TOMBSTONE (-2^52 µs, 142 years) is added to a tombstone's expiry to score
-- it; leases score above TOMBSTONE / 2 while the clock reads after 1953.
local TOMBSTONE = -4503599627370496

local live = string.format('(%d', now) -- the scores of live leases start after now
redis.call('ZREMRANGEBYSCORE', key, string.format('%d', TOMBSTONE / 2), string.format('%d', now))
local n = redis.call('ZCOUNT', key, live, '+inf')
local reset = 0
if n > 0 then -- the newest lease: tombstones score below every lease
  reset = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')[2] - now
end
local remaining = max(0, rate - n)
if cost == 0 then
  return {1, 0, remaining, reset, 0}
end
if n >= rate then -- the oldest live lease frees a place first
  local oldest = redis.call('ZRANGEBYSCORE', key, live, '+inf', 'WITHSCORES', 'LIMIT', '0', '1')[2]
  return {0, 1, remaining, reset, math.min(oldest - now, MAX_LEASE_RETRY)}
end
local reset_after = max(reset, period)
-- charge(lease, now, period, reset_after, TOMBSTONE): hold lease until
-- now + period, unless a live tombstone says it was released before this
-- take ran; the key lives until its newest lease expires.
local tomb = redis.call('ZSCORE', key, '~' .. lease)
if tomb then
  redis.call('ZREM', key, '~' .. lease)
end
if not tomb or tomb - TOMBSTONE <= now then
  redis.call('ZADD', key, string.format('%d', now + period), lease)
end
redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(reset_after / 1000))))
return {1, 0, max(0, rate - n - 1), reset_after, 0}
