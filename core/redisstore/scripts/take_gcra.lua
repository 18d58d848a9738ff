-- take_gcra.lua: take cost from one GCRA limit (docs/algorithms.md, "GCRA").
-- The program is clock.lua (which defines now) followed by this file; it
-- decides exactly as take.lua does for one GCRA limit, and defines nothing
-- it does not run: Redis runs the whole program on every call.
--
-- KEYS[1]  the state key, <prefix>:{<identity>}:<name>:g
-- ARGV[1]  rate: requests per period
-- ARGV[2]  period: µs
-- ARGV[3]  capacity: the burst; may be left out when it is the rate
-- ARGV[4]  cost: non-negative integer, 0 peeks (charges nothing); may be
--          left out when it is 1 (then ARGV[3] may be too)
-- Reply    {allowed (1/0), reason (0 not denied, 1 exhausted, 2 cost too
--          high), remaining, reset_after (µs), retry_after (µs)}: after the
--          charge when allowed, before it otherwise.
-- State    a string, the theoretical arrival time tat in µs (a double with
--          17 significant digits), expiring when the bucket is full again.
-- The roundings of common.lua are written out: round_up(x) is
-- max(0, ceil(x - 0.5)), floor_tokens(x, t) is
-- max(0, floor(x + 0.5 / t)).

local key = KEYS[1]
local max, floor, ceil = math.max, math.floor, math.ceil -- one lookup each
-- ARGV and the stored tat are converted by arithmetic (x + 0), once;
-- tonumber converts twice (clock.lua). The TTL is sent as a string: Redis
-- formats a Lua number with "%.17g", which costs more than string.format's
-- "%d".
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local capacity, cost = tonumber(ARGV[3]) or rate, tonumber(ARGV[4]) or 1
local t = period / rate -- emission interval T, µs
local tat = max((redis.call('GET', key) or now) + 0, now)
local bt = capacity * t -- B·T
local new_tat = tat + cost * t
local allow_at = new_tat - bt
if cost > capacity or cost == 0 or allow_at - now > 0.5 then
  -- Nothing is charged: the reply describes the state before the take,
  -- computed only here (an admitted take does not need it).
  local before = max(0, floor((bt - (tat - now)) / t + 0.5 / t))
  local reset_before = max(0, ceil(tat - now - 0.5))
  if cost > capacity then
    return {0, 2, before, reset_before, 0}
  end
  if cost == 0 then
    return {1, 0, before, reset_before, 0}
  end
  return {0, 1, before, reset_before, max(0, ceil(allow_at - now - 0.5))}
end
local reset_after = max(0, ceil(new_tat - now - 0.5))
local after = max(0, floor((bt - (new_tat - now)) / t + 0.5 / t))
-- tat as common.lua's float writes it; the TTL as its ttl_ms.
local stored
if new_tat == floor(new_tat) and math.abs(new_tat) < 9007199254740992 then
  stored = string.format('%d', new_tat)
else
  stored = string.format('%.17g', new_tat)
end
redis.call('SET', key, stored, 'PX', string.format('%d', max(1, ceil(reset_after / 1000))))
return {1, 0, after, reset_after, 0}
