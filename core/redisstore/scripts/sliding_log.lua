-- sliding_log.lua: sliding window log, one limit
-- (docs/algorithms.md, "Sliding window log").
--
-- Part of the one script built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the script's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  none read directly; now (µs since 2024-01-01T00:00:00Z), cost,
--          rate (requests per window) and period (window length, µs) come
--          from take.lua; the capacity is the rate.
--   Reply: none; returns the values described in common.lua.
-- State: key is a sorted set with one member per admitted request unit,
-- score = admission time in µs, member "<now>:<i>"; the window is
-- (now - period, now]; the key expires one period after the newest entry.
-- Unlike the other algorithms, evaluating prunes expired entries even when
-- nothing is charged; that changes no decision.

-- write_sliding_log adds cost entries at now, to expire one period (µs)
-- after them.
local function write_sliding_log(key, now, cost, period)
  local batch = 512 -- members per ZADD: Lua's unpack has a stack limit
  local score = int(now)
  local first = redis.call('ZCOUNT', key, score, score)
  local args = {}
  for i = first, first + cost - 1 do
    args[#args + 1] = score
    args[#args + 1] = score .. ':' .. int(i)
    if #args == 2 * batch or i == first + cost - 1 then
      redis.call('ZADD', key, unpack(args))
      args = {}
    end
  end
  redis.call('PEXPIRE', key, ttl_ms(period))
end

local function sliding_log(key, now, cost, rate, period)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now - period))
  local n = redis.call('ZCARD', key)
  local reset_before = 0
  if n > 0 then
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    reset_before = tonumber(newest[2]) + period - now
  end
  if cost > rate then
    return COST_TOO_HIGH, rate - n, reset_before, 0
  end
  if cost == 0 then
    return 0, rate - n, reset_before, 0, rate - n, reset_before
  end
  if n + cost > rate then
    local k = n + cost - rate -- the k-th oldest entry must leave the window
    local oldest = redis.call('ZRANGE', key, k - 1, k - 1, 'WITHSCORES')
    return EXHAUSTED, rate - n, reset_before, tonumber(oldest[2]) + period - now
  end
  return 0, rate - n, reset_before, 0, rate - n - cost, period, write_sliding_log, now, cost, period
end
