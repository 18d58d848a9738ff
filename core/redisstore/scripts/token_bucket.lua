-- token_bucket.lua: token bucket with continuous refill, one limit
-- (docs/algorithms.md, "Token bucket"): the body of a take of one token
-- bucket limit, which both take_token_bucket and take run (how, and the
-- locals it reads: common.lua).
-- State: key is a hash, tk = tokens (a double with 17 significant digits)
-- and ts = time of the last refill (integer µs), expiring when full again.
-- A clock reading earlier than ts is taken as ts (no quota comes back), and
-- the durations are then measured from the reading: longer by the lag.
-- The roundings are GCRA's (gcra.lua).

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
    return {0, 2, before, reset_before, 0} -- cost too high
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
-- charge(left, at, reset_after): the tokens left as gcra.lua writes tat,
-- the refill time, and the expiry when full, in whole ms.
local stored
if left == floor(left) and math.abs(left) < 9007199254740992 then
  stored = string.format('%d', left)
else
  stored = string.format('%.17g', left)
end
redis.call('HSET', key, 'tk', stored, 'ts', string.format('%d', at))
redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(reset_after / 1000))))
return {1, 0, max(0, floor(left + 0.5 / t)), reset_after, 0}
