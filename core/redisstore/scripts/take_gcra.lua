-- take_gcra.lua: take cost from one GCRA limit (docs/algorithms.md, "GCRA").
-- The program is clock.lua (which defines now), this file (which reads
-- the ARGV), then gcra.lua, the algorithm as the program take runs it too
-- (common.lua): it decides exactly as take does for one GCRA limit, and
-- defines nothing it does not run: Redis runs the whole program on every
-- call.
--
-- KEYS[1]  the state key, <prefix>:{<identity>}:<name>:g
-- ARGV[1]  rate: requests per period
-- ARGV[2]  period: µs
-- ARGV[3]  capacity: the burst; may be left out when it is the rate
-- ARGV[4]  cost: non-negative integer, 0 peeks (charges nothing); may be
--          left out when it is 1 (then ARGV[3] may be too)
-- Reply    {allowed (1/0), reason (0 not denied, 1 exhausted, 2 cost too
--          high), remaining, reset_after (µs), retry_after (µs)}: after the
--          charge when allowed, before it otherwise.
-- State    gcra.lua's.

local key = KEYS[1]
local max, floor, ceil = math.max, math.floor, math.ceil -- one lookup each
-- ARGV are converted by arithmetic (x + 0), once; tonumber converts twice
-- (clock.lua).
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local capacity, cost = tonumber(ARGV[3]) or rate, tonumber(ARGV[4]) or 1
