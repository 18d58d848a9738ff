-- gcra.lua: GCRA, one limit (docs/algorithms.md, "GCRA"): the body of a
-- take of one GCRA limit, which both take_gcra and take run (how, and the
-- locals it reads: common.lua).
-- State: key is a string, the theoretical arrival time tat in µs (a double
-- with 17 significant digits), expiring when the bucket is full again.
-- A duration rounds up and a token amount down, within 0.5 µs of a
-- boundary counting as on it (docs/algorithms.md, "Tolerance"):
-- max(0, ceil(x - 0.5)) and max(0, floor(x + 0.5 / t)).

local t = period / rate -- emission interval T, µs
local tat = max((redis.call('GET', key) or now) + 0, now) -- a corrupt tat: a script error
local bt = capacity * t -- B·T
local new_tat = tat + cost * t
local allow_at = new_tat - bt
if cost > capacity or cost == 0 or allow_at - now > 0.5 then
  -- Nothing is charged: the reply describes the state before the take,
  -- computed only here (an admitted take does not need it).
  local before = max(0, floor((bt - (tat - now)) / t + 0.5 / t))
  local reset_before = max(0, ceil(tat - now - 0.5))
  if cost > capacity then
    return {0, 2, before, reset_before, 0} -- cost too high
  end
  if cost == 0 then
    return {1, 0, before, reset_before, 0}
  end
  return {0, 1, before, reset_before, max(0, ceil(allow_at - now - 0.5))}
end
local reset_after = max(0, ceil(new_tat - now - 0.5))
local after = max(0, floor((bt - (new_tat - now)) / t + 0.5 / t))
-- charge(new_tat, reset_after): tat, with 17 significant digits (a whole
-- number below 2^53 with %d: the same bytes, at a third of the cost), to
-- expire when full, in whole ms.
local stored
if new_tat == floor(new_tat) and math.abs(new_tat) < 9007199254740992 then
  stored = string.format('%d', new_tat)
else
  stored = string.format('%.17g', new_tat)
end
redis.call('SET', key, stored, 'PX', string.format('%d', max(1, ceil(reset_after / 1000))))
return {1, 0, after, reset_after, 0}
