-- fixed_window.lua: fixed window counter, one limit
-- (docs/algorithms.md, "Fixed window"): the body of a take of one fixed
-- window limit, which both take_fixed_window and take run (how, and the
-- locals it reads: common.lua); the capacity is the rate.
-- State: key is a hash, w = window number floor(now / period) and n = count
-- (integers), expiring at the end of the window. A clock reading before the
-- stored window is taken as its start (the old window never reopens); the
-- end of the window is measured from the reading. The take that opens a
-- window writes both fields and the TTL; a later take of the same window,
-- on a clock that is not behind it, writes n alone: the window's end has
-- not moved.

local state = redis.call('HMGET', key, 'w', 'n')
local stored_w = tonumber(state[1])
local at = now -- the key's time: never back into an earlier window
if stored_w then
  at = max(now, stored_w * period)
end
local w = floor(at / period)
local window_end = (w + 1) * period - now -- from the reading
local n = 0
if stored_w == w then
  n = tonumber(state[2]) or 0
end
local reset_before = 0
if n > 0 then
  reset_before = window_end
end
-- max: a rate lowered under a live key may be overdrawn.
local before = max(0, rate - n)
if cost > rate then
  return {0, 2, before, reset_before, 0} -- cost too high
end
if cost == 0 then
  return {1, 0, before, reset_before, 0}
end
if n + cost > rate then
  return {0, 1, before, reset_before, window_end}
end
-- charge(w, n, cost, at, now, window_end): the count, and the window and
-- its expiry unless the stored window goes on.
if n > 0 and at == now then
  redis.call('HSET', key, 'n', string.format('%d', n + cost))
else
  redis.call('HSET', key, 'w', string.format('%d', w), 'n', string.format('%d', n + cost))
  redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(window_end / 1000))))
end
return {1, 0, max(0, rate - n - cost), window_end, 0}
