-- token_bucket.lua: token bucket with continuous refill, one limit
-- (docs/algorithms.md, "Token bucket").
--
-- Part of the program "take" built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the script's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  none read directly; now (µs since 2024-01-01T00:00:00Z), cost,
--          rate (requests per period), period (µs) and capacity (burst)
--          come from take.lua.
--   Reply: none; returns the values described in common.lua.
-- State: key is a hash, tk = tokens (a double with 17 significant digits)
-- and ts = time of the last refill (integer µs), expiring when full again.
-- A clock reading earlier than ts is taken as ts (no quota comes back), and
-- the durations are then measured from the reading: longer by the lag.

-- write_token_bucket stores the tokens left and the refill time ts, to
-- expire in ttl µs.
local function write_token_bucket(key, tokens, ts, ttl)
  redis.call('HSET', key, 'tk', float(tokens), 'ts', int(ts))
  redis.call('PEXPIRE', key, ttl_ms(ttl))
end

local function token_bucket(key, now, cost, rate, period, capacity)
  local t = period / rate -- emission interval T, µs
  local state = redis.call('HMGET', key, 'tk', 'ts')
  local tokens = tonumber(state[1]) or capacity
  local ts = tonumber(state[2]) or now
  local lag = math.max(0, ts - now) -- how far the clock is behind ts
  local at = now + lag -- the key's time never runs backwards
  tokens = math.min(capacity, tokens + (at - ts) / t)
  local before = floor_tokens(tokens, t)
  local reset_before = round_up((capacity - tokens) * t)
  if reset_before > 0 then
    reset_before = reset_before + lag
  end
  if cost > capacity then
    return COST_TOO_HIGH, before, reset_before, 0
  end
  if cost == 0 then
    return 0, before, reset_before, 0, before, reset_before
  end
  if (cost - tokens) * t > 0.5 then
    return EXHAUSTED, before, reset_before, round_up((cost - tokens) * t) + lag
  end
  -- A take admitted within the tolerance leaves a debt (at most 0.5/T
  -- tokens) that is kept, as GCRA keeps it in tat: tokens may go below 0.
  local left = tokens - cost
  local reset_after = round_up((capacity - left) * t) + lag
  return 0, before, reset_before, 0, floor_tokens(left, t), reset_after,
    write_token_bucket, left, at, reset_after
end
