-- sliding_log.lua: sliding window log, one limit
-- (docs/algorithms.md, "Sliding window log"): the body of a take of one
-- sliding log limit, which both take_sliding_log and take run (how, and
-- the locals it reads: common.lua); the capacity is the rate.
-- State: key is a sorted set of runs, one member per admitting take (takes
-- in the same µs share one): score = the time of the take in µs, member
-- "r<u>:<c>" = c request units, the last of which is unit number u of the
-- key (units are numbered 1, 2, ... in the order they are admitted, so the
-- run holds units u - c + 1 .. u). The log's time is at = max(now, newest
-- score): a reading behind the newest run is taken as its time, and new
-- runs are written at it. The window (at - period, at] holds
-- u(newest) - u(oldest) + c(oldest) units: a take costs O(log n) whatever
-- its cost. A member that is not "r<u>:<c>" (the layout before runs, one
-- member "<time>:<i>" per unit) counts as one unit. The key expires when
-- its newest run leaves the window, at + period.
-- Unlike the other algorithms, evaluating prunes expired runs even when
-- nothing is charged; that changes no decision.
-- The arguments of redis.call on the common paths are strings (common.lua;
-- for a ZRANGE of two numbers, the formatting costs more than the ZRANGE
-- itself on a short log); the rare paths keep numbers.

local RUN = '^r(%d+):(%d+)$' -- a run member: its u and c
local newest = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
local newest_at = newest[2] -- its score, nil for an empty log
local at = now -- the log's time: never before its newest run
if newest_at then
  newest_at = newest_at + 0
  at = max(now, newest_at)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', at - period))
end
local live = newest_at and newest_at > at - period
-- The window holds n units: f members at the start counted one each (the
-- members that are not runs), then the runs after unit number base; size
-- is the number of members when read, or nil. When the newest member is
-- not a run, or the runs are numbered out of order (old and new scripts
-- wrote the key at once), every member counts as one unit.
local n, f, base, size = 0, 0, 0, nil
local u_new, c_new -- of the newest member when it is a live run
if live then
  u_new, c_new = string.match(newest[1], RUN)
  if u_new == nil then
    size = redis.call('ZCARD', key)
    n, f = size, size
  else
    u_new, c_new = u_new + 0, c_new + 0
    local first = redis.call('ZRANGE', key, '0', '0')[1]
    local u_first, c_first = u_new, c_new -- a log of one run
    if first ~= newest[1] then
      u_first, c_first = string.match(first, RUN)
      if u_first == nil then
        -- Members from before runs come first: find the first run.
        size = redis.call('ZCARD', key)
        local lo, hi = 1, size - 1 -- the newest member is a run
        while lo < hi do
          local mid = floor((lo + hi) / 2)
          if string.match(redis.call('ZRANGE', key, mid, mid)[1], RUN) then
            hi = mid
          else
            lo = mid + 1
          end
        end
        f, first = lo, redis.call('ZRANGE', key, lo, lo)[1]
        u_first, c_first = string.match(first, RUN)
      end
      u_first, c_first = u_first + 0, c_first + 0
    end
    base = u_first - c_first
    local least = c_new -- the units the first and the newest run hold
    if first ~= newest[1] then
      least = c_first + c_new
    end
    if u_new - base < least then -- numbered out of order: count members
      size = size or redis.call('ZCARD', key)
      n, f, base = size, size, 0
    else
      n = f + u_new - base
    end
  end
end
local reset_before = 0
if n > 0 then
  reset_before = newest_at + period - now
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
  -- The k-th oldest unit must leave the window: one of the first f
  -- members, or else the first run whose last unit is at least unit
  -- base + k - f, found by bisection.
  local k = n + cost - rate
  local oldest
  if k <= f then
    oldest = redis.call('ZRANGE', key, k - 1, k - 1, 'WITHSCORES')[2]
  else
    local target = base + k - f
    local rank = string.format('%d', f)
    local run = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
    local u = tonumber((string.match(run[1], RUN)))
    if u and u >= target then
      oldest = run[2]
    else
      local lo, hi = f + 1, (size or redis.call('ZCARD', key)) - 1 -- the newest run holds the target
      while lo < hi do
        local mid = floor((lo + hi) / 2)
        u = tonumber((string.match(redis.call('ZRANGE', key, mid, mid)[1], RUN)))
        if u and u >= target then
          hi = mid
        else
          lo = mid + 1
        end
      end
      oldest = redis.call('ZRANGE', key, lo, lo, 'WITHSCORES')[2]
    end
  end
  return {0, 1, before, reset_before, oldest + period - now}
end
local u, c, old = cost, cost, false
if u_new then -- the newest member is a live run
  u = u_new + cost
  if newest_at == at then -- same µs: the new run replaces it
    c, old = c_new + cost, newest[1]
  end
end
local reset_after = at + period - now
-- charge(at, u, c, old, reset_after): the run r<u>:<c> at the log's time,
-- replacing the run old (one of the same µs that it includes) unless old
-- is false, and the expiry when it leaves the window.
if old then
  redis.call('ZREM', key, old)
end
redis.call('ZADD', key, string.format('%d', at), string.format('r%d:%d', u, c))
redis.call('PEXPIRE', key, string.format('%d', max(1, ceil(reset_after / 1000))))
return {1, 0, max(0, rate - n - cost), reset_after, 0}
