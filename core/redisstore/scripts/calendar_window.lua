-- calendar_window.lua: calendar window counter, one limit
-- (docs/algorithms.md, "Calendar windows").
--
-- Part of the program "take" built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the script's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  the limit's four values are 5 (the algorithm), rate (requests
--          per window), the nominal period (µs, unused here) and first: the
--          ARGV index of its six boundaries, which follow every limit's four
--          values. ARGV[first .. first + 5] are the starts of consecutive
--          calendar windows in µs since 2024-01-01T00:00:00Z, increasing
--          (an equal pair is an empty window, a day a zone skipped), the
--          last one ending the last window. The app computes them from the
--          time zone database around its own clock; the server's clock
--          picks the window.
--   Reply: none; returns the values described in common.lua. A key time
--          outside the boundaries raises the error
--          "ratelimit: calendar: ..." (the app's clock and the server's
--          disagree by more than the list covers); nothing is written.
-- State: key is a hash, s = the start of the window (µs since
-- 2024-01-01T00:00:00Z) and n = its count (integers), expiring at the end
-- of the window. As in the fixed window, a clock reading before the stored
-- window is taken as its start (the old window never reopens), and the end
-- of the window is measured from the reading.

-- write_calendar_window stores window s with count n, to expire in ttl µs.
local function write_calendar_window(key, s, n, ttl)
  redis.call('HSET', key, 's', int(s), 'n', int(n))
  redis.call('PEXPIRE', key, ttl_ms(ttl))
end

local function calendar_window(key, now, cost, rate, _, first)
  local state = redis.call('HMGET', key, 's', 'n')
  local stored_s = tonumber(state[1])
  local at = now -- the key's time: never back into an earlier window
  if stored_s then
    at = math.max(now, stored_s)
  end
  local start, stop = nil, ARGV[first] + 0 -- numbers: take.lua checked them
  for i = first + 1, first + 5 do
    local b = ARGV[i] + 0
    if stop <= at and at < b then
      start, stop = stop, b
      break
    end
    stop = b
  end
  if not start then
    error({err = 'ERR ratelimit: calendar: time ' .. int(at) .. ' is outside the window boundaries ' ..
      ARGV[first] .. ' to ' .. ARGV[first + 5] .. ' (µs since 2024-01-01): the app and server clocks disagree'})
  end
  local window_end = stop - now -- from the reading
  local n = 0
  if stored_s == start then
    n = tonumber(state[2]) or 0
  end
  return count_window(n, window_end, cost, rate, write_calendar_window, start)
end
