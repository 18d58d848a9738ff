-- gcra.lua: GCRA, one limit (docs/algorithms.md, "GCRA").
--
-- Part of the program "take" built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the program's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  none read directly; now (µs since 2024-01-01T00:00:00Z), cost,
--          rate (requests per period), period (µs) and capacity (burst)
--          come from take.lua.
--   Reply: none; returns the values described in common.lua.
-- State: key is a string, the theoretical arrival time tat in µs (a double
-- with 17 significant digits), expiring when the bucket is full again.

-- write_gcra stores tat, to expire in ttl µs.
local function write_gcra(key, tat, ttl)
  redis.call('SET', key, float(tat), 'PX', ttl_ms(ttl))
end

local function gcra(key, now, cost, rate, period, capacity)
  local t = period / rate -- emission interval T, µs
  local tat = math.max((redis.call('GET', key) or now) + 0, now) -- a corrupt tat: a script error
  local bt = capacity * t -- B·T
  local before = floor_tokens((bt - (tat - now)) / t, t)
  local reset_before = round_up(tat - now)
  if cost > capacity then
    return COST_TOO_HIGH, before, reset_before, 0
  end
  if cost == 0 then
    return 0, before, reset_before, 0, before, reset_before
  end
  local new_tat = tat + cost * t
  local allow_at = new_tat - bt
  if allow_at - now > 0.5 then
    return EXHAUSTED, before, reset_before, round_up(allow_at - now)
  end
  local reset_after = round_up(new_tat - now)
  local after = floor_tokens((bt - (new_tat - now)) / t, t)
  return 0, before, reset_before, 0, after, reset_after, write_gcra, new_tat, reset_after
end
