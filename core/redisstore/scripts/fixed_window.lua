-- fixed_window.lua: fixed window counter, one limit
-- (docs/algorithms.md, "Fixed window"): the body of a take of one fixed
-- window limit, which both take_fixed_window and take run (how, and the
-- locals it reads: common.lua); the capacity is the rate.
-- State: key is a hash, w = window number floor(now / d), n = count and
-- d = the window length (µs) the state counts in (integers), expiring at
-- the end of the window. State without d (written before d was stored)
-- counts in windows of the limit's period. When d is not the period, the
-- stored window is renumbered: its count belongs to the window of the
-- period holding its start, w * d, or to none (docs/algorithms.md, "When
-- the period changes"). A clock reading before the stored window's start
-- is taken as that start (the old window never reopens); the end of the
-- window is measured from the reading. The take that opens a window (or
-- renumbers one) writes every field and the TTL; a later take of the same
-- window, on a clock that is not behind it, writes n alone: the window's
-- end has not moved.

local state = redis.call('HMGET', key, 'w', 'n', 'd')
local stored_w, d = tonumber(state[1]), tonumber(state[3]) or period
local at = now -- the key's time: never back into an earlier window
if stored_w then
  at = max(now, stored_w * d)
  if d ~= period then -- the period changed: the window holding the start
    stored_w = floor(stored_w * d / period)
  end
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
-- charge(w, n, cost, at, now, window_end, d, period): the count, and the
-- window, its length and its expiry unless the stored window goes on.
if n > 0 and at == now and d == period then
  redis.call('HSET', key, 'n', string.format('%d', n + cost))
else
  redis.call('HSET', key, 'w', string.format('%d', w), 'n', string.format('%d', n + cost), 'd', string.format('%d', period))
  redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(window_end / 1000))))
end
return {1, 0, max(0, rate - n - cost), window_end, 0}
