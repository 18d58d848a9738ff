-- clock.lua: the clock of the one-limit programs. Each take_<algorithm>
-- program is this file, then take_<algorithm>.lua, then <algorithm>.lua
-- (docs/redis-protocol.md, "How the programs are built").
--   KEYS, ARGV: none read here.
--   Defines:    now, the server's TIME in µs since 2024-01-01T00:00:00Z
--               (Unix 1704067200), an integer.
-- On Redis before 5.0 a script may write after TIME only once it called
-- redis.replicate_commands().

if redis.replicate_commands then
  redis.replicate_commands()
end
local time = redis.call('TIME')
-- Arithmetic converts each string once; tonumber would convert it twice
-- (Lua 5.1 checks that it is a number, then converts it).
local now = (time[1] - 1704067200) * 1000000 + time[2]
