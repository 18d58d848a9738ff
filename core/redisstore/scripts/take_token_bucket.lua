-- take_token_bucket.lua: take cost from one token bucket limit
-- (docs/algorithms.md, "Token bucket"). The program is clock.lua (which
-- defines now), this file (which reads the ARGV), then token_bucket.lua,
-- the algorithm as the program take runs it too (common.lua): it decides
-- exactly as take does for one token bucket limit, and defines nothing it
-- does not run.
--
-- KEYS[1]  the state key, <prefix>:{<identity>}:<name>:t
-- ARGV     as take_gcra.lua's: rate, period (µs), [capacity, [cost]]
-- Reply    {allowed, reason, remaining, reset_after (µs), retry_after (µs)},
--          as take_gcra.lua.
-- State    token_bucket.lua's.

local key = KEYS[1]
local max, floor, ceil = math.max, math.floor, math.ceil -- one lookup each
local rate, period = ARGV[1] + 0, ARGV[2] + 0 -- x + 0: take_gcra.lua
local capacity, cost = tonumber(ARGV[3]) or rate, tonumber(ARGV[4]) or 1
