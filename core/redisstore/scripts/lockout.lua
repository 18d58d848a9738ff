-- lockout.lua: the end of the program "take" (after take.lua) for a take
-- with a limit that has a lockout (core.Lockout; docs/redis-protocol.md,
-- "Lockouts"); a take without one returns in take.lua and never runs, nor
-- builds, the functions here. The one-limit programs have none: a limit
-- with a lockout is always taken by "take".
--   KEYS:  take.lua's: KEYS[n + j] is the lockout key of the j-th limit
--          with a lockout.
--   ARGV:  take.lua's: the six lockout values of the j-th limit with a
--          lockout start at lockout_values + 6 (j - 1).
--   Reply: take.lua's, with reason 3 for a limit whose lockout holds the
--          client.
-- Reads the locals of take.lua: n, lockouts, lockout_values,
-- LOCKOUT_VALUES, now, cost, evaluate, charged, reply.
-- State: a lockout key, <prefix>:{<identity>}:<name>:x, is a hash of
-- integers, times in µs since 2024-01-01T00:00:00Z: v the denials counted
-- in the window ending at w, n the level of the last lockout (1 for the
-- first in a row), u the end of that lockout, c the end of its cool-down.
-- A field absent is none: no window open (v and w), no lockout yet (n, u
-- and c); 0 is an instant like any other. The key expires once w and c have
-- passed.

-- locked_out returns the reply r of a limit made that of a client locked
-- out for retry µs more: denied, reason 3, nothing remaining, full again no
-- sooner than the lockout ends.
local function locked_out(r, retry)
  return {0, 3, 0, max(r[4], retry), retry}
end

-- lockout_count counts a denial at now of the limit whose lockout key is
-- key and whose lockout values are ARGV[at .. at + 5] (after, within, for,
-- multiplier, max, cooldown; µs but after and multiplier), and returns the
-- length (µs) of the lockout it starts, 0 when it starts none. A denial
-- opens a window of within µs when none is open; the after-th within it
-- locks the client out for for × multiplier^(n − 1), at most max, n going up
-- by one when the lockout starts before the cool-down of the previous one
-- ends (else back to 1), and the count starts again.
local function lockout_count(key, now, at)
  local after, within, first = ARGV[at] + 0, ARGV[at + 1] + 0, ARGV[at + 2] + 0
  local state = redis.call('HMGET', key, 'v', 'w', 'n', 'c')
  local v, w, level, c = tonumber(state[1]) or 0, tonumber(state[2]), tonumber(state[3]) or 0, tonumber(state[4])
  if not w or w <= now then
    v, w = 0, now + within
  end
  v = v + 1
  if v < after then
    redis.call('HSET', key, 'v', string.format('%d', v), 'w', string.format('%d', w))
    redis.call('PEXPIRE', key, string.format('%d', max(1, ceil((max(w, c or w) - now) / 1000))))
    return 0
  end
  local multiplier, most = ARGV[at + 3] + 0, ARGV[at + 4] + 0
  if c and c > now then
    level = level + 1
  else
    level = 1
  end
  local d = first
  for _ = 2, level do -- ends within 45 steps: d doubles at least, up to most
    if multiplier <= 1 or d >= most then
      break
    end
    d = d * multiplier
  end
  d = math.min(d, most)
  c = now + d + ARGV[at + 5]
  redis.call('HDEL', key, 'v', 'w') -- the count starts again
  redis.call('HSET', key, 'n', string.format('%d', level), 'u', string.format('%d', now + d), 'c', string.format('%d', c))
  redis.call('PEXPIRE', key, string.format('%d', max(1, ceil((c - now) / 1000))))
  return d
end

-- A client locked out by the lockout of any limit: denied, nothing charged
-- or counted. That limit replies locked out, the others their peek.
local locked, until_ = false, {}
for i, j in pairs(lockouts) do
  local u = tonumber(redis.call('HGET', KEYS[n + j], 'u'))
  if u and u > now then
    locked, until_[i] = true, u
  end
end
if locked then
  for i = 1, n do
    local r = evaluate(i, 0)
    if until_[i] then
      r = locked_out(r, until_[i] - now)
    end
    for _, v in ipairs(r) do
      reply[#reply + 1] = v
    end
  end
  return reply
end

-- Otherwise as take.lua for several limits, and a limit with a lockout
-- that denied for want of quota counts the denial, which may lock the
-- client out at once.
local evaluations, all_allowed = {}, true
for i = 1, n do
  local e = {evaluate(i, cost)} -- the reply, then the charge and its arguments
  all_allowed = all_allowed and e[1][1] == 1 -- the reply's allowed
  evaluations[i] = e
end
for i, e in ipairs(evaluations) do
  local r = e[1]
  local j = lockouts[i]
  if all_allowed then
    charged(KEYS[i], unpack(e))
  elseif r[1] == 1 then
    r = evaluate(i, 0)
  elseif j and r[2] == 1 and cost > 0 then
    local d = lockout_count(KEYS[n + j], now, lockout_values + LOCKOUT_VALUES * (j - 1))
    if d > 0 then
      r = locked_out(r, d)
    end
  end
  for _, v in ipairs(r) do -- the whole reply: a longer one fails the caller's count
    reply[#reply + 1] = v
  end
end
return reply
