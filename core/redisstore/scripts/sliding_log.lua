-- sliding_log.lua: sliding window log, one limit
-- (docs/algorithms.md, "Sliding window log").
--
-- Part of the program "take" built from scripts/*.lua (order in common.lua);
-- called by take.lua, whose header holds the script's KEYS, ARGV and reply.
--   KEYS:  none read directly; key is one of take.lua's KEYS.
--   ARGV:  none read directly; now (µs since 2024-01-01T00:00:00Z), cost,
--          rate (requests per window) and period (window length, µs) come
--          from take.lua; the capacity is the rate.
--   Reply: none; returns the values described in common.lua.
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

-- parse_run returns u and c of a run member, or nil for any other member.
local function parse_run(member)
  local u, c = string.match(member, '^r(%d+):(%d+)$')
  if u then
    return u + 0, c + 0 -- digits
  end
  return nil
end

-- log_window counts the units of the live log at key, whose newest member
-- is newest. It returns n, the units in the window; f, how many members at
-- the start are counted as one unit each (members that are not runs); base,
-- the number of the unit before the first run; size, the number of members
-- when it was read (else nil); and u and c of the newest member when it is
-- a run (else nil). When the newest member is not a run, or the runs are
-- numbered out of order (old and new scripts wrote the key at once), every
-- member counts as one unit.
local function log_window(key, newest)
  local u_new, c_new = parse_run(newest)
  if u_new == nil then
    local size = redis.call('ZCARD', key)
    return size, size, 0, size
  end
  local first = redis.call('ZRANGE', key, '0', '0')[1]
  local f, size = 0, nil
  local u_first, c_first = u_new, c_new -- a log of one run
  if first ~= newest then
    u_first, c_first = parse_run(first)
    if u_first == nil then
      -- Members from before runs come first: find the first run.
      size = redis.call('ZCARD', key)
      local lo, hi = 1, size - 1 -- the newest member is a run
      while lo < hi do
        local mid = math.floor((lo + hi) / 2)
        if parse_run(redis.call('ZRANGE', key, mid, mid)[1]) then
          hi = mid
        else
          lo = mid + 1
        end
      end
      f, first = lo, redis.call('ZRANGE', key, lo, lo)[1]
      u_first, c_first = parse_run(first)
    end
  end
  local base = u_first - c_first
  local least = c_new -- the units the first and the newest run hold
  if first ~= newest then
    least = c_first + c_new
  end
  if u_new - base < least then
    size = size or redis.call('ZCARD', key)
    return size, size, 0, size, u_new, c_new
  end
  return f + u_new - base, f, base, size, u_new, c_new
end

-- log_kth returns the time of the k-th oldest unit (1 <= k <= n) of a log
-- that log_window counted: one of the first f members, or else the first
-- run whose last unit is at least unit base + k - f, found by bisection.
local function log_kth(key, k, f, base, size)
  if k <= f then
    return redis.call('ZRANGE', key, k - 1, k - 1, 'WITHSCORES')[2] + 0
  end
  local target = base + k - f
  local rank = int(f)
  local run = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
  local u = parse_run(run[1])
  if u and u >= target then
    return run[2] + 0
  end
  local lo, hi = f + 1, (size or redis.call('ZCARD', key)) - 1 -- the newest run holds the target
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    u = parse_run(redis.call('ZRANGE', key, mid, mid)[1])
    if u and u >= target then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return redis.call('ZRANGE', key, lo, lo, 'WITHSCORES')[2] + 0
end

-- write_sliding_log adds the run member at time at, replacing the run old
-- (a run of the same µs that member includes) when it is not false, to
-- expire in ttl µs.
local function write_sliding_log(key, at, member, old, ttl)
  if old then
    redis.call('ZREM', key, old)
  end
  redis.call('ZADD', key, int(at), member)
  redis.call('PEXPIRE', key, ttl_ms(ttl))
end

local function sliding_log(key, now, cost, rate, period)
  local newest = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  local newest_at = newest[2] -- its score, nil for an empty log
  local at = now -- the log's time: never before its newest run
  if newest_at then
    newest_at = newest_at + 0
    at = math.max(now, newest_at)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', int(at - period))
  end
  local live = newest_at and newest_at > at - period
  local n, f, base, size, u_new, c_new = 0, 0, 0, nil, nil, nil
  if live then
    n, f, base, size, u_new, c_new = log_window(key, newest[1])
  end
  local reset_before = 0
  if n > 0 then
    reset_before = newest_at + period - now
  end
  if cost > rate then
    return COST_TOO_HIGH, rate - n, reset_before, 0
  end
  if cost == 0 then
    return 0, rate - n, reset_before, 0, rate - n, reset_before
  end
  if n + cost > rate then
    local oldest = log_kth(key, n + cost - rate, f, base, size) -- it must leave the window
    return EXHAUSTED, rate - n, reset_before, oldest + period - now
  end
  local u, c, old = cost, cost, false
  if u_new then -- the newest member is a live run
    u = u_new + cost
    if newest_at == at then -- same µs: the new run replaces it
      c, old = c_new + cost, newest[1]
    end
  end
  local reset_after = at + period - now
  return 0, rate - n, reset_before, 0, rate - n - cost, reset_after,
    write_sliding_log, at, string.format('r%d:%d', u, c), old, reset_after
end
