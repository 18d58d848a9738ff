-- test_clock.lua: the clock of the one-limit programs of a store with a
-- test clock (redisstore.WithClock, tests only), in place of clock.lua.
--   KEYS:    none read here.
--   ARGV:    the last one is now, µs since 2024-01-01T00:00:00Z, after the
--            arguments of the take_<algorithm>.lua it precedes; it is
--            removed, so that program sees its own ARGV.
--   Defines: now.

local now = tonumber(table.remove(ARGV))
