-- sliding_window.lua: sliding window counter, one limit
-- (docs/algorithms.md, "Sliding window counter").
--
-- Part of the program "take" built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the script's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  none read directly; now (µs since 2024-01-01T00:00:00Z), cost,
--          rate (requests per window) and period (window length, µs) come
--          from take.lua; the capacity is the rate.
--   Reply: none; returns the values described in common.lua.
-- State: key is a hash, w = current window number, n = its count, p = the
-- previous window's count (integers), expiring when both windows are past.
-- A clock reading before the stored window is taken as its start, and the
-- durations are then measured from the reading: longer by the lag. The
-- take that opens a window writes every field and the TTL; a later take of
-- the same window, on a clock that is not behind it, writes n alone: the
-- window's end has not moved.

-- write_sliding_window stores window w with count n and the previous
-- window's count p, to expire in ttl µs; w nil: the stored window goes on,
-- only its count changes.
local function write_sliding_window(key, w, n, p, ttl)
  if not w then
    redis.call('HSET', key, 'n', int(n))
    return
  end
  redis.call('HSET', key, 'w', int(w), 'n', int(n), 'p', int(p))
  redis.call('PEXPIRE', key, ttl_ms(ttl))
end

local function sliding_window(key, now, cost, rate, period)
  local state = redis.call('HMGET', key, 'w', 'n', 'p')
  local stored_w, n = tonumber(state[1]), tonumber(state[2]) or 0
  local at = now -- the key's time: never back into an earlier window
  if stored_w then
    at = math.max(now, stored_w * period)
  end
  local lag = at - now -- how far the clock is behind the stored window's start
  local w = math.floor(at / period)
  local e = at - w * period -- elapsed in the current window, µs
  local cur, prev = 0, 0
  if stored_w == w then
    cur, prev = n, tonumber(state[3]) or 0
  elseif stored_w == w - 1 then
    prev = n
  end
  local used_p = prev * (period - e) + cur * period -- the estimate, scaled by P
  local rate_p = rate * period
  local before = math.max(0, math.floor((rate_p - used_p) / period))
  local reset_before = 0
  if cur > 0 then
    reset_before = 2 * period - e + lag
  elseif prev > 0 then
    reset_before = period - e + lag
  end
  if cost > rate then
    return COST_TOO_HIGH, before, reset_before, 0
  end
  if cost == 0 then
    return 0, before, reset_before, 0, before, reset_before
  end
  if used_p + cost * period > rate_p then
    -- The admission test is exact (no tolerance), so the wait is the
    -- exact ceiling: a wait rounded down would be denied again. prev > 0:
    -- beyond 2^53 (rate * period), rounding may deny cur + cost <= rate
    -- with prev = 0, where the first wait would divide 0 by 0.
    local retry
    if cur + cost <= rate and prev > 0 then
      retry = math.max(1, math.ceil(period - e - (rate - cur - cost) * period / prev))
    else
      retry = math.max(1, math.ceil((period - e) + period - (rate - cost) * period / cur))
    end
    return EXHAUSTED, before, reset_before, retry + lag
  end
  local charged = cur + cost
  local after = math.floor((rate_p - prev * (period - e) - charged * period) / period)
  local reset_after = 2 * period - e + lag
  local id = w
  if cur > 0 and lag == 0 then
    id = nil -- the stored window goes on: its end, and the key's, have not moved
  end
  return 0, before, reset_before, 0, after, reset_after,
    write_sliding_window, id, charged, prev, reset_after
end
