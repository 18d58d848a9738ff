-- lease.lua: release or renew one lease of a concurrency limit.
-- The program "lease", of its own (not part of "take"), self-contained.
-- Contract for other languages: docs/redis-protocol.md.
--
-- KEYS[1]  the concurrency limit's key, <prefix>:{<identity>}:<name>:i,
--          a sorted set of lease ids scored by expiry (concurrency.lua).
-- ARGV[1]  now: µs since 2024-01-01T00:00:00Z (test clocks only), or the
--          empty string to use the server's TIME (production); read by
--          renew and by a release that leaves a tombstone only.
-- ARGV[2]  the lease id.
-- ARGV[3]  the lease TTL P in µs, as an integer: P > 0 renews the lease;
--          -P releases it and, when it is not held, leaves a tombstone for
--          P µs, so that a take of it still in flight holds nothing; 0
--          releases it without a tombstone (the earlier protocol).
-- Reply    an array of one integer: 1 when the lease was held (and is now
--          released or renewed), 0 when it was not (released already,
--          expired, never taken, or not taken yet). Releasing twice is
--          harmless; an expired lease is not renewed (its place may be
--          another request's).
-- Writes   release: ZREM (Redis deletes the key with its last member; the
--          TTL of a key left non-empty still covers its newest lease); for
--          a lease not held, a tombstone, "~" and the lease id scored by
--          its expiry - 2^52 (as concurrency.lua reads it), the removal of
--          the expired tombstones, and the key's PEXPIRE, which covers its
--          newest lease and the tombstone (max(newest - now, P)). renew: the lease's new
--          expiry, and the key's PEXPIRE, which covers the newest lease.

local key, lease, ttl = KEYS[1], ARGV[2], tonumber(ARGV[3])
if ttl <= 0 then
  local held = redis.call('ZREM', key, lease)
  if held == 1 or ttl == 0 then
    return {held}
  end
end

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  if redis.replicate_commands then
    redis.replicate_commands() -- Redis < 5: allow writes after TIME
  end
  local t = redis.call('TIME')
  now = (tonumber(t[1]) - 1704067200) * 1000000 + tonumber(t[2])
end
-- As strings: Redis formats a Lua number with "%.17g" (take_gcra.lua).
if ttl < 0 then -- a release of a lease not held: its take may not have run yet
  local TOMBSTONE = -4503599627370496 -- -2^52 µs, concurrency.lua
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now + TOMBSTONE))
  redis.call('ZADD', key, string.format('%d', now - ttl + TOMBSTONE), '~' .. lease)
  -- The key lives until its newest lease expires, and the tombstone.
  local reset = -ttl
  local top = tonumber(redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')[2])
  if top > TOMBSTONE / 2 then
    reset = math.max(reset, top - now)
  end
  redis.call('PEXPIRE', key, string.format('%d', math.max(1, math.ceil(reset / 1000))))
  return {0}
end
local score = redis.call('ZSCORE', key, lease)
if not score or tonumber(score) <= now then
  return {0}
end
local expiry = now + ttl
redis.call('ZADD', key, 'XX', string.format('%d', expiry), lease)
local newest = tonumber(redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')[2])
redis.call('PEXPIRE', key, string.format('%d', math.max(1, math.ceil((newest - now) / 1000))))
return {1}
