-- take_sliding_window.lua: take cost from one sliding window counter limit
-- (docs/algorithms.md, "Sliding window counter"). The program is clock.lua
-- (which defines now), this file (which reads the ARGV), then
-- sliding_window.lua, the algorithm as the program take runs it too
-- (common.lua): it decides exactly as take does for one limit of it, and
-- defines nothing it does not run.
--
-- KEYS[1]  the state key, <prefix>:{<identity>}:<name>:s
-- ARGV[1]  rate: requests per window (also the capacity)
-- ARGV[2]  period: the window length, µs
-- ARGV[3]  cost: non-negative integer, 0 peeks (charges nothing); may be
--          left out when it is 1
-- Reply    {allowed, reason, remaining, reset_after (µs), retry_after (µs)},
--          as take_gcra.lua.
-- State    sliding_window.lua's.

local key = KEYS[1]
local max, floor, ceil = math.max, math.floor, math.ceil -- one lookup each
local rate, period = ARGV[1] + 0, ARGV[2] + 0 -- x + 0: take_gcra.lua
local cost = tonumber(ARGV[3]) or 1
