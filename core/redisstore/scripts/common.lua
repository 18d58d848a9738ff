-- common.lua: the start of the program "take", for takes of several
-- limits (and of one limit with no program of its own: a calendar window,
-- a concurrency limit). The Go code builds that program from this file,
-- then one function per algorithm file (gcra.lua, token_bucket.lua,
-- fixed_window.lua, sliding_window.lua, sliding_log.lua,
-- calendar_window.lua, concurrency.lua, in that order), then take.lua,
-- which holds the program's KEYS, ARGV and reply (and
-- docs/redis-protocol.md), then lockout.lua, the end of a take with a
-- lockout. A take of one limit of the first five
-- algorithms runs take_<algorithm>.lua instead, built from the same
-- algorithm file.
--   KEYS:  none read here.
--   ARGV:  none read here (clock reads the value of ARGV[1] it is given).
--   Reply: none; defines the locals below.
--
-- An algorithm file is the body of one take of one limit, written once for
-- both programs:
--   reads   key, now (µs since 2024-01-01T00:00:00Z), cost, rate, period
--           (µs), capacity (the burst; the rate for the window algorithms,
--           which do not read it; the calendar window's first), lease (the
--           take's lease id, nil when none; read by concurrency only), and
--           max, floor, ceil (math's);
--   returns on every path the reply of that limit, one table of the layout
--           of the wire: {allowed (1/0), reason (0 not denied, 1 exhausted,
--           2 cost too high), remaining, reset_after (µs), retry_after
--           (µs)}, the state after the charge when admitted with cost > 0,
--           before it otherwise;
--   writes  only in its charge: the lines from its line
--             -- charge(a, b, ...): ...
--           to its last line, return {1, 0, ...}, the reply of an admitted
--           take of cost > 0, which they precede. The charge reads key and
--           the locals a, b, ... of the body, which are never nil, and
--           declares nothing the last line reads. A denial or a peek
--           returns before it and writes nothing (the sliding log's and the
--           concurrency limit's pruning aside).
-- A one-limit program is the file as it is, after clock.lua and its
-- take_<algorithm>.lua, which set those locals: one run from top to
-- bottom, which charges as soon as it admits. In this program the file
-- becomes two functions, <algorithm>(key, now, cost, rate, period,
-- capacity, lease), which returns the reply and, when it admits with cost
-- > 0, charge_<algorithm> and the values of a, b, ... instead of charging,
-- and charge_<algorithm>(key, a, b, ...), which take.lua calls when every
-- limit admits.
--
-- Redis runs the whole script on every call: every local function here is
-- built anew each time, so the program defines one function per algorithm
-- and its charge, and no closures or tables per limit beyond the replies.
--
-- Numbers cost most where they cross between Lua and Redis, so the files
-- send the numbers of redis.call as strings (string.format('%d', x);
-- Redis formats a Lua number argument with "%.17g", which costs more) and
-- convert a string known to be a number (TIME, a score, a run's digits, a
-- limit's four values in ARGV) by arithmetic, x + 0, once; tonumber
-- converts twice (clock). tonumber stays where the value may not be a
-- number and the program answers that case: a field of a corrupt or older
-- key, an ARGV take.lua checks.

local max, floor, ceil = math.max, math.floor, math.ceil -- one lookup each

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
