-- lockout.lua: the lockouts of the program "take" (core.Lockout;
-- docs/redis-protocol.md, "Lockouts"), between the algorithms' functions
-- and take.lua, which calls these functions only for a take with a limit
-- that has a lockout. The one-limit programs have none: a limit with a
-- lockout is always taken by "take".
--   KEYS:  none read here; take.lua passes each lockout key.
--   ARGV:  the six lockout values of a limit, read from at (below).
--   Reply: none; defines the functions below.
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
