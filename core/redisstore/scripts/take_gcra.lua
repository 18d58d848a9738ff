-- take_gcra.lua: take cost from one GCRA limit (docs/algorithms.md, "GCRA").
-- The program is clock.lua (which defines now) followed by this file; it
-- decides exactly as take.lua does for one GCRA limit, and defines nothing
-- it does not run: Redis runs the whole program on every call.
--
-- KEYS[1]  the state key, <prefix>:{<identity>}:<name>:g
-- ARGV[1]  cost: non-negative integer; 0 peeks (charges nothing)
-- ARGV[2]  rate: requests per period
-- ARGV[3]  period: µs
-- ARGV[4]  capacity: the burst
-- Reply    {allowed (1/0), reason (0 not denied, 1 exhausted, 2 cost too
--          high), remaining, reset_after (µs), retry_after (µs)}: after the
--          charge when allowed, before it otherwise.
-- State    a string, the theoretical arrival time tat in µs (a double with
--          17 significant digits), expiring when the bucket is full again.
-- The roundings of common.lua are written out: round_up(x) is
-- math.max(0, math.ceil(x - 0.5)), floor_tokens(x, t) is
-- math.max(0, math.floor(x + 0.5 / t)).

local key = KEYS[1]
local cost, rate, period, capacity = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local t = period / rate -- emission interval T, µs
local tat = math.max(tonumber(redis.call('GET', key) or now), now)
local bt = capacity * t -- B·T
local before = math.max(0, math.floor((bt - (tat - now)) / t + 0.5 / t))
local reset_before = math.max(0, math.ceil(tat - now - 0.5))
if cost > capacity then
  return {0, 2, before, reset_before, 0}
end
if cost == 0 then
  return {1, 0, before, reset_before, 0}
end
local new_tat = tat + cost * t
local allow_at = new_tat - bt
if allow_at - now > 0.5 then
  return {0, 1, before, reset_before, math.max(0, math.ceil(allow_at - now - 0.5))}
end
local reset_after = math.max(0, math.ceil(new_tat - now - 0.5))
local after = math.max(0, math.floor((bt - (new_tat - now)) / t + 0.5 / t))
-- tat as common.lua's float writes it; the TTL as its ttl_ms.
local stored
if new_tat == math.floor(new_tat) and math.abs(new_tat) < 9007199254740992 then
  stored = string.format('%d', new_tat)
else
  stored = string.format('%.17g', new_tat)
end
redis.call('SET', key, stored, 'PX', math.max(1, math.ceil(reset_after / 1000)))
return {1, 0, after, reset_after, 0}
