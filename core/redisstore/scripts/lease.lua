-- lease.lua: release or renew one lease of a concurrency limit.
-- The program "lease", of its own (not part of "take"), self-contained.
-- Contract for other languages: docs/redis-protocol.md.
--
-- KEYS[1]  the concurrency limit's key, <prefix>:{<identity>}:<name>:i,
--          a sorted set of lease ids scored by expiry (concurrency.lua).
-- ARGV[1]  now: µs since 2024-01-01T00:00:00Z (test clocks only), or the
--          empty string to use the server's TIME (production); read by
--          renew only.
-- ARGV[2]  the lease id.
-- ARGV[3]  the lease TTL in µs: 0 releases the lease, > 0 renews it.
-- Reply    an array of one integer: 1 when the lease was held (and is now
--          released or renewed), 0 when it was not (released already,
--          expired, never taken). Releasing twice is harmless; an expired
--          lease is not renewed (its place may be another request's).
-- Writes   release: ZREM (Redis deletes the key with its last member; the
--          TTL of a key left non-empty still covers its newest lease).
--          renew: the lease's new expiry, and the key's PEXPIRE, which
--          covers the newest lease.

local key, lease, ttl = KEYS[1], ARGV[2], tonumber(ARGV[3])
if ttl == 0 then
  return {redis.call('ZREM', key, lease)}
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
local score = redis.call('ZSCORE', key, lease)
if not score or tonumber(score) <= now then
  return {0}
end
local expiry = now + ttl
redis.call('ZADD', key, 'XX', string.format('%d', expiry), lease)
local newest = tonumber(redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')[2])
-- As strings: Redis formats a Lua number with "%.17g" (take_gcra.lua).
redis.call('PEXPIRE', key, string.format('%d', math.max(1, math.ceil((newest - now) / 1000))))
return {1}
