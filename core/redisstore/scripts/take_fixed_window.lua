-- take_fixed_window.lua: take cost from one fixed window limit
-- (docs/algorithms.md, "Fixed window"). The program is clock.lua (which
-- defines now) followed by this file; it decides exactly as take.lua does
-- for one fixed window limit, and defines nothing it does not run.
--
-- KEYS[1]  the state key, <prefix>:{<identity>}:<name>:f
-- ARGV[1]  rate: requests per window (also the capacity)
-- ARGV[2]  period: the window length, µs
-- ARGV[3]  cost: non-negative integer, 0 peeks (charges nothing); may be
--          left out when it is 1
-- Reply    {allowed, reason, remaining, reset_after (µs), retry_after (µs)},
--          as take_gcra.lua.
-- State    a hash, w = window number floor(now / period) and n = count
--          (integers), expiring at the end of the window. A clock reading
--          before the stored window is taken as its start (the old window
--          never reopens); the end of the window is measured from the
--          reading. The take that opens a window writes both fields and
--          the TTL; a later take of the same window, on a clock that is
--          not behind it, writes n alone: the window's end has not moved.

local key = KEYS[1]
local max, floor, ceil = math.max, math.floor, math.ceil -- one lookup each
-- ARGV are converted by arithmetic (x + 0), once; tonumber converts twice
-- (clock.lua). The TTL is sent as a string: Redis formats a Lua number
-- with "%.17g", which costs more than string.format's "%d".
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local cost = tonumber(ARGV[3]) or 1
local state = redis.call('HMGET', key, 'w', 'n')
local stored_w = tonumber(state[1])
local at = now -- the key's time: never back into an earlier window
if stored_w then
  at = max(now, stored_w * period)
end
local w = floor(at / period)
local window_end = (w + 1) * period - now -- from the reading
local n = 0
if stored_w == w then
  n = tonumber(state[2]) or 0
end
local reset_before = 0
if n > 0 then
  reset_before = window_end
end
-- math.max: a rate lowered under a live key may be overdrawn.
local before = max(0, rate - n)
if cost > rate then
  return {0, 2, before, reset_before, 0}
end
if cost == 0 then
  return {1, 0, before, reset_before, 0}
end
if n + cost > rate then
  return {0, 1, before, reset_before, window_end}
end
if n > 0 and at == now then
  redis.call('HSET', key, 'n', string.format('%d', n + cost))
else
  redis.call('HSET', key, 'w', string.format('%d', w), 'n', string.format('%d', n + cost))
  redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(window_end / 1000))))
end
return {1, 0, max(0, rate - n - cost), window_end, 0}
