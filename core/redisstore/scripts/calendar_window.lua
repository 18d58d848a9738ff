-- calendar_window.lua: calendar window counter, one limit
-- (docs/algorithms.md, "Calendar windows"): the body of a take of one
-- calendar window limit, which take runs (how, and the locals it reads:
-- common.lua; there is no one-limit program of it).
--   ARGV:  the limit's four values are 5 (the algorithm), rate (requests
--          per window), the nominal period (µs, unused here) and first: the
--          ARGV index of its six boundaries, which follow every limit's four
--          values; take.lua hands first over as capacity.
--          ARGV[first .. first + 5] are the starts of consecutive
--          calendar windows in µs since 2024-01-01T00:00:00Z, increasing
--          (an equal pair is an empty window, a day a zone skipped), the
--          last one ending the last window. The app computes them from the
--          time zone database around its own clock; the server's clock
--          picks the window.
--   Error: a key time outside the boundaries raises the error
--          "ratelimit: calendar: ..." (the app's clock and the server's
--          disagree by more than the list covers); nothing is written.
-- State: key is a hash, s = the start of the window (µs since
-- 2024-01-01T00:00:00Z) and n = its count (integers), expiring at the end
-- of the window. As in the fixed window, a clock reading before the stored
-- window is taken as its start (the old window never reopens), and the end
-- of the window is measured from the reading.

local first = capacity
local state = redis.call('HMGET', key, 's', 'n')
local stored_s = tonumber(state[1])
local at = now -- the key's time: never back into an earlier window
if stored_s then
  at = max(now, stored_s)
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
  error({err = 'ERR ratelimit: calendar: time ' .. string.format('%d', at) .. ' is outside the window boundaries ' ..
    ARGV[first] .. ' to ' .. ARGV[first + 5] .. ' (µs since 2024-01-01): the app and server clocks disagree'})
end
local window_end = stop - now -- from the reading
local n = 0
if stored_s == start then
  n = tonumber(state[2]) or 0
end
-- As fixed_window.lua decides, with the window's start for its number.
local reset_before, before = 0, max(0, rate - n)
if n > 0 then
  reset_before = window_end
end
if cost > rate then
  return {0, 2, before, reset_before, 0} -- cost too high
elseif cost == 0 then
  return {1, 0, before, reset_before, 0}
elseif n + cost > rate then
  return {0, 1, before, reset_before, window_end}
end
-- charge(start, n, cost, window_end): the window and its count, to expire
-- at its end.
redis.call('HSET', key, 's', string.format('%d', start), 'n', string.format('%d', n + cost))
redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(window_end / 1000))))
return {1, 0, max(0, rate - n - cost), window_end, 0}
