-- common.lua: helpers shared by the algorithm functions.
--
-- Part of the program "take", for takes of several limits (and of one
-- limit with no program of its own: a calendar window, a concurrency
-- limit), that the Go code builds by concatenating, in this order:
-- common.lua, gcra.lua, token_bucket.lua, fixed_window.lua,
-- sliding_window.lua, sliding_log.lua, calendar_window.lua,
-- concurrency.lua, take.lua. The KEYS, ARGV and reply of that program are
-- in take.lua (and docs/redis-protocol.md). A take of one limit of another
-- algorithm runs take_<algorithm>.lua instead, which writes these helpers
-- out.
--   KEYS:  none read here.
--   ARGV:  none read here (clock reads the value of ARGV[1] it is given).
--   Reply: none; defines the locals below.
--
-- Every algorithm function has the signature
--   algorithm(key, now, cost, rate, period, capacity, lease)
-- with now and period in µs (integers), lease the take's lease id (nil when
-- none; read by concurrency only), and returns plain values, no table:
--   reason                      0 admitted, 1 exhausted, 2 cost too high
--   remaining, reset            whole requests left / µs until full, before the charge
--   retry                       µs until a request of this cost would pass; 0 when admitted
--   remaining_after, reset_after  the same after the charge (admitted only)
--   write, ...                  a function and its arguments: write(key, ...)
--                               charges the cost (admitted with cost > 0 only)
-- An algorithm function reads its key but never writes it, except through
-- write (and the sliding log's pruning of expired entries).
--
-- Redis runs the whole script on every call: every local function here is
-- built anew each time, so the files define few functions and no closures
-- or tables per limit, and takes of one limit run a program of their own.
--
-- Numbers cost most where they cross between Lua and Redis, so the files
-- send the numbers of redis.call as strings (int, float, ttl_ms; Redis
-- formats a Lua number argument with "%.17g") and convert a string known to
-- be a number (TIME, a score, a run's digits, a limit's four values in
-- ARGV) by arithmetic, x + 0, once; tonumber converts twice (clock).
-- tonumber stays where the value may not be a number and the program
-- answers that case: a field of a corrupt or older key, an ARGV take.lua
-- checks.

-- Reasons of a denial (0 is "not denied").
local EXHAUSTED, COST_TOO_HIGH = 1, 2

-- round_up turns a duration in µs into whole µs; a value within 0.5 µs of
-- a boundary counts as on it (docs/algorithms.md, "Tolerance").
local function round_up(x)
  return math.max(0, math.ceil(x - 0.5))
end

-- floor_tokens turns a token amount into whole requests, with the same
-- tolerance; t is the emission interval in µs.
local function floor_tokens(x, t)
  return math.max(0, math.floor(x + 0.5 / t))
end

-- int and float format numbers for redis.call explicitly: integers in
-- decimal, doubles with 17 significant digits, so stored values round-trip
-- exactly whatever the Redis version (tostring keeps only 14 digits).
-- float writes a whole number below 2^53 with %d: the same bytes as %.17g,
-- at a third of its cost.
local function int(x)
  return string.format('%d', x)
end

local function float(x)
  if x == math.floor(x) and math.abs(x) < 9007199254740992 then
    return string.format('%d', x)
  end
  return string.format('%.17g', x)
end

-- ttl_ms is the PEXPIRE (or PX), in whole ms (at least 1), of state that
-- is back to its default in us µs, as a string: Redis formats a Lua number
-- argument of redis.call with "%.17g", which costs more than int's "%d".
local function ttl_ms(us)
  return int(math.max(1, math.ceil(us / 1000)))
end

-- EPOCH is 2024-01-01T00:00:00Z in Unix seconds.
local EPOCH = 1704067200

-- clock returns now in µs since EPOCH: the test clock arg, or TIME.
local function clock(arg)
  if arg ~= '' then
    return tonumber(arg)
  end
  if redis.replicate_commands then
    redis.replicate_commands() -- Redis < 5: allow writes after TIME
  end
  local t = redis.call('TIME')
  -- Arithmetic converts each string once; tonumber would convert it twice
  -- (Lua 5.1 checks that it is a number, then converts it).
  return (t[1] - EPOCH) * 1000000 + t[2]
end

-- take_one charges a take of one limit, given the key and the values of
-- its algorithm, and returns the script's reply: for one limit, all or
-- nothing is that limit's own answer.
local function take_one(key, reason, remaining, reset, retry, remaining_after, reset_after, write, ...)
  if reason ~= 0 then
    return {0, reason, math.max(0, remaining), reset, retry}
  end
  if write then
    write(key, ...)
  end
  -- math.max: a rate lowered under a live key may be overdrawn.
  return {1, 0, math.max(0, remaining_after), reset_after, 0}
end
