-- fixed_window.lua: fixed window counter, one limit
-- (docs/algorithms.md, "Fixed window").
--
-- Part of the program "take" built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the script's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  none read directly; now (µs since 2024-01-01T00:00:00Z), cost,
--          rate (requests per window) and period (window length, µs) come
--          from take.lua; the capacity is the rate.
--   Reply: none; returns the values described in common.lua.
-- State: key is a hash, w = window number floor(now / period) and n = count
-- (integers), expiring at the end of the window. A clock reading before the
-- stored window is taken as its start (the old window never reopens); the
-- end of the window is measured from the reading. The take that opens a
-- window writes both fields and the TTL; a later take of the same window,
-- on a clock that is not behind it, writes n alone: the window's end has
-- not moved.

-- write_fixed_window stores window w with count n, to expire in ttl µs;
-- w nil: the stored window goes on, only its count changes.
local function write_fixed_window(key, w, n, ttl)
  if not w then
    redis.call('HSET', key, 'n', int(n))
    return
  end
  redis.call('HSET', key, 'w', int(w), 'n', int(n))
  redis.call('PEXPIRE', key, ttl_ms(ttl))
end

-- count_window decides cost against a window holding n of rate, which
-- ends window_end µs after the reading; admitted, write(key, id, n + cost,
-- window_end) stores it. The fixed and the calendar window share it.
local function count_window(n, window_end, cost, rate, write, id)
  local reset_before = 0
  if n > 0 then
    reset_before = window_end
  end
  if cost > rate then
    return COST_TOO_HIGH, rate - n, reset_before, 0
  end
  if cost == 0 then
    return 0, rate - n, reset_before, 0, rate - n, reset_before
  end
  if n + cost > rate then
    return EXHAUSTED, rate - n, reset_before, window_end
  end
  return 0, rate - n, reset_before, 0, rate - n - cost, window_end,
    write, id, n + cost, window_end
end

local function fixed_window(key, now, cost, rate, period)
  local state = redis.call('HMGET', key, 'w', 'n')
  local stored_w = tonumber(state[1])
  local at = now -- the key's time: never back into an earlier window
  if stored_w then
    at = math.max(now, stored_w * period)
  end
  local w = math.floor(at / period)
  local window_end = (w + 1) * period - now -- from the reading
  local n = 0
  if stored_w == w then
    n = tonumber(state[2]) or 0
  end
  local id = w
  if n > 0 and at == now then
    id = nil -- the stored window goes on
  end
  return count_window(n, window_end, cost, rate, write_fixed_window, id)
end
