-- take_token_bucket.lua: take cost from one token bucket limit
-- (docs/algorithms.md, "Token bucket"). The program is clock.lua (which
-- defines now) followed by this file; it decides exactly as take.lua does
-- for one token bucket limit, and defines nothing it does not run.
--
-- KEYS[1]  the state key, <prefix>:{<identity>}:<name>:t
-- ARGV[1]  rate: requests per period
-- ARGV[2]  period: µs
-- ARGV[3]  capacity: the burst; may be left out when it is the rate
-- ARGV[4]  cost: non-negative integer, 0 peeks (charges nothing); may be
--          left out when it is 1 (then ARGV[3] may be too)
-- Reply    {allowed, reason, remaining, reset_after (µs), retry_after (µs)},
--          as take_gcra.lua.
-- State    a hash, tk = tokens (a double with 17 significant digits) and
--          ts = time of the last refill (integer µs), expiring when full
--          again. A clock reading earlier than ts is taken as ts, and the
--          durations are then measured from the reading: longer by the lag.

local key = KEYS[1]
local max, floor, ceil = math.max, math.floor, math.ceil -- one lookup each
-- ARGV are converted by arithmetic (x + 0), once; tonumber converts twice
-- (clock.lua). The TTL is sent as a string: Redis formats a Lua number
-- with "%.17g", which costs more than string.format's "%d".
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local capacity, cost = tonumber(ARGV[3]) or rate, tonumber(ARGV[4]) or 1
local t = period / rate -- emission interval T, µs
local state = redis.call('HMGET', key, 'tk', 'ts')
local tokens = tonumber(state[1]) or capacity
local ts = tonumber(state[2]) or now
local lag = max(0, ts - now) -- how far the clock is behind ts
local at = now + lag -- the key's time never runs backwards
tokens = math.min(capacity, tokens + (at - ts) / t)
if cost > capacity or cost == 0 or (cost - tokens) * t > 0.5 then
  -- Nothing is charged: the reply describes the state before the take,
  -- computed only here (an admitted take does not need it).
  local before = max(0, floor(tokens + 0.5 / t))
  local reset_before = max(0, ceil((capacity - tokens) * t - 0.5))
  if reset_before > 0 then
    reset_before = reset_before + lag
  end
  if cost > capacity then
    return {0, 2, before, reset_before, 0}
  end
  if cost == 0 then
    return {1, 0, before, reset_before, 0}
  end
  return {0, 1, before, reset_before, max(0, ceil((cost - tokens) * t - 0.5)) + lag}
end
-- A take admitted within the tolerance leaves a debt (at most 0.5/T
-- tokens) that is kept, as GCRA keeps it in tat: tokens may go below 0.
local left = tokens - cost
local reset_after = max(0, ceil((capacity - left) * t - 0.5)) + lag
local stored
if left == floor(left) and math.abs(left) < 9007199254740992 then
  stored = string.format('%d', left)
else
  stored = string.format('%.17g', left)
end
redis.call('HSET', key, 'tk', stored, 'ts', string.format('%d', at))
redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(reset_after / 1000))))
return {1, 0, max(0, floor(left + 0.5 / t)), reset_after, 0}
