-- common.lua: helpers shared by the algorithm functions.
--
-- Part of the one script that the Go code builds by concatenating, in this
-- order: common.lua, gcra.lua, token_bucket.lua, fixed_window.lua,
-- sliding_window.lua, sliding_log.lua, take.lua. The KEYS, ARGV and reply of
-- that script are in take.lua (and docs/redis-protocol.md).
--   KEYS:  none read here.
--   ARGV:  none read here.
--   Reply: none; defines the locals below.
--
-- Every algorithm function has the signature
--   algorithm(key, now, cost, rate, period, capacity) -> result
-- with now and period in µs (integers), and returns a result table:
--   allowed          this limit alone admits the request (boolean)
--   reason           0 not denied, 1 exhausted, 2 cost too high
--   remaining_before, reset_before   whole requests left / µs until full, before the charge
--   remaining_after,  reset_after    the same after the charge (admitted results only)
--   retry            µs until a request of this cost would pass; 0 when admitted
--   write            function that charges the cost, or nil (peeks)
-- An algorithm function reads its key but never writes it, except through
-- write (and the sliding log's pruning of expired entries).

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

-- ttl_ms is the PEXPIRE, in whole ms (at least 1), of state that is back to
-- its default in us µs.
local function ttl_ms(us)
  return math.max(1, math.ceil(us / 1000))
end

-- int and float format numbers for redis.call explicitly: integers in
-- decimal, doubles with 17 significant digits, so stored values round-trip
-- exactly whatever the Redis version (tostring keeps only 14 digits).
local function int(x)
  return string.format('%d', x)
end

local function float(x)
  return string.format('%.17g', x)
end

-- denied is the result of a limit that does not admit the request.
local function denied(reason, remaining, reset, retry)
  return {allowed = false, reason = reason, remaining_before = remaining, reset_before = reset, retry = retry}
end

-- admitted is the result of a limit that admits the request; write charges it.
local function admitted(remaining_before, reset_before, remaining_after, reset_after, write)
  return {allowed = true, reason = 0, remaining_before = remaining_before, reset_before = reset_before,
    remaining_after = remaining_after, reset_after = reset_after, retry = 0, write = write}
end

-- peeked is the result of a cost-0 take: admitted, nothing to write.
local function peeked(remaining, reset)
  return admitted(remaining, reset, remaining, reset, nil)
end
