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
-- lease is live while now < its score: evaluating drops the scores <= now
-- first (even when nothing is charged; that changes no decision). Any cost
-- above zero takes one lease, so the limit is never "cost too high". The
-- key expires with its newest lease. lease.lua releases and renews leases.

-- MAX_LEASE_RETRY caps the retry of a denial (core.ConcurrencyRetryAfter):
-- leases are usually released long before they expire.
local MAX_LEASE_RETRY = 1000000

-- lease_score returns the score of the lease at rank r ('0' the oldest,
-- '-1' the newest) of key, which holds one.
local function lease_score(key, r)
  return redis.call('ZRANGE', key, r, r, 'WITHSCORES')[2] + 0
end

-- add_lease holds lease at key until expiry; the key lives ttl µs.
local function add_lease(key, lease, expiry, ttl)
  redis.call('ZADD', key, int(expiry), lease)
  redis.call('PEXPIRE', key, ttl_ms(ttl))
end

local function concurrency(key, now, cost, rate, period, capacity, lease)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now))
  local n = redis.call('ZCARD', key)
  local reset = 0
  if n > 0 then
    reset = lease_score(key, '-1') - now
  end
  local remaining = rate - n
  if cost == 0 then
    return 0, remaining, reset, 0, remaining, reset
  end
  if n >= rate then
    return EXHAUSTED, remaining, reset, math.min(lease_score(key, '0') - now, MAX_LEASE_RETRY)
  end
  local reset_after = math.max(reset, period)
  return 0, remaining, reset, 0, remaining - 1, reset_after, add_lease, lease, now + period, reset_after
end
