-- sliding_window.lua: sliding window counter, one limit
-- (docs/algorithms.md, "Sliding window counter"): the body of a take of
-- one sliding window limit, which both take_sliding_window and take run
-- (how, and the locals it reads: common.lua); the capacity is the rate.
-- State: key is a hash, w = current window number, n = its count, p = the
-- previous window's count and d = the window length (µs) the state counts
-- in (integers), expiring when both windows are past. State without d
-- (written before d was stored) counts in windows of the limit's period.
-- When d is not the period, each stored count belongs to the window of the
-- period holding its window's start, or to none (docs/algorithms.md, "When
-- the period changes"). A clock reading before the stored window's start
-- is taken as that start, and the durations are then measured from the
-- reading: longer by the lag. The take that opens a window (or renumbers
-- one) writes every field and the TTL; a later take of the same window, on
-- a clock that is not behind it, writes n alone: the window's end has not
-- moved.

local state = redis.call('HMGET', key, 'w', 'n', 'p', 'd')
local stored_w, n, d = tonumber(state[1]), tonumber(state[2]) or 0, tonumber(state[4]) or period
local at = now -- the key's time: never back into an earlier window
if stored_w then
  at = max(now, stored_w * d)
end
local lag = at - now -- how far the clock is behind the stored window's start
local w = floor(at / period)
local e = at - w * period -- elapsed in the current window, µs
local cur, prev = 0, 0
if d == period then
  if stored_w == w then
    cur, prev = n, tonumber(state[3]) or 0
  elseif stored_w == w - 1 then
    prev = n
  end
elseif stored_w then -- the period changed: each count to the window holding its start
  local wn, wp, np = floor(stored_w * d / period), floor((stored_w - 1) * d / period), tonumber(state[3]) or 0
  if wn == w then
    cur = n
  elseif wn == w - 1 then
    prev = n
  end
  if wp == w then
    cur = cur + np
  elseif wp == w - 1 then
    prev = prev + np
  end
end
local used_p = prev * (period - e) + cur * period -- the estimate, scaled by P
local rate_p = rate * period
if cost > rate or cost == 0 or used_p + cost * period > rate_p then
  -- Nothing is charged: the reply describes the state before the take,
  -- computed only here (an admitted take does not need it).
  local before = max(0, floor((rate_p - used_p) / period))
  local reset_before = 0
  if cur > 0 then
    reset_before = 2 * period - e + lag
  elseif prev > 0 then
    reset_before = period - e + lag
  end
  if cost > rate then
    return {0, 2, before, reset_before, 0} -- cost too high
  end
  if cost == 0 then
    return {1, 0, before, reset_before, 0}
  end
  -- The admission test is exact (no tolerance), so the wait is the exact
  -- ceiling: a wait rounded down would be denied again. prev > 0: beyond
  -- 2^53 (rate * period), rounding may deny cur + cost <= rate with
  -- prev = 0, where the first wait would divide 0 by 0.
  local retry
  if cur + cost <= rate and prev > 0 then
    retry = max(1, ceil(period - e - (rate - cur - cost) * period / prev))
  else
    retry = max(1, ceil((period - e) + period - (rate - cost) * period / cur))
  end
  return {0, 1, before, reset_before, retry + lag}
end
local charged = cur + cost
local after = floor((rate_p - prev * (period - e) - charged * period) / period)
local reset_after = 2 * period - e + lag
-- charge(w, charged, prev, cur, lag, reset_after, d, period): the count,
-- and the window, the previous count, the length and the expiry unless the
-- stored window goes on (then its end, and the key's, have not moved).
if cur > 0 and lag == 0 and d == period then
  redis.call('HSET', key, 'n', string.format('%d', charged))
else
  redis.call('HSET', key, 'w', string.format('%d', w), 'n', string.format('%d', charged), 'p', string.format('%d', prev),
    'd', string.format('%d', period))
  redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(reset_after / 1000))))
end
return {1, 0, max(0, after), reset_after, 0}
