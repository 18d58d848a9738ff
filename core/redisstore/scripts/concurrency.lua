-- concurrency.lua: concurrency (in-flight) limit, one limit
-- (docs/algorithms.md, "Concurrency").
--
-- Part of the program "take" built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the script's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  none read directly; now (µs since 2024-01-01T00:00:00Z), cost,
--          rate (most leases in flight), period (lease TTL, µs) and the
--          lease id come from take.lua; the capacity is the rate.
--   Reply: none; returns the values described in common.lua.
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

-- oldest_lease returns the expiry of the oldest live lease of key, which
-- holds one: tombstones score below every lease.
local function oldest_lease(key, now)
  return redis.call('ZRANGEBYSCORE', key, '(' .. int(now), '+inf', 'WITHSCORES', 'LIMIT', '0', '1')[2] + 0
end

-- newest_lease returns the expiry of the newest lease of key, which holds
-- one.
local function newest_lease(key)
  return redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')[2] + 0
end

-- add_lease holds lease at key until expiry, unless a live tombstone says
-- it was released before this take ran; the key lives ttl µs.
local function add_lease(key, lease, expiry, ttl, now)
  local tomb = redis.call('ZSCORE', key, '~' .. lease)
  if tomb then
    redis.call('ZREM', key, '~' .. lease)
  end
  if not tomb or tomb - TOMBSTONE <= now then
    redis.call('ZADD', key, int(expiry), lease)
  end
  redis.call('PEXPIRE', key, ttl_ms(ttl))
end

local function concurrency(key, now, cost, rate, period, capacity, lease)
  redis.call('ZREMRANGEBYSCORE', key, int(TOMBSTONE / 2), int(now))
  local n = redis.call('ZCOUNT', key, '(' .. int(now), '+inf')
  local reset = 0
  if n > 0 then
    reset = newest_lease(key) - now
  end
  local remaining = rate - n
  if cost == 0 then
    return 0, remaining, reset, 0, remaining, reset
  end
  if n >= rate then
    return EXHAUSTED, remaining, reset, math.min(oldest_lease(key, now) - now, MAX_LEASE_RETRY)
  end
  local reset_after = math.max(reset, period)
  return 0, remaining, reset, 0, remaining - 1, reset_after, add_lease, lease, now + period, reset_after, now
end
