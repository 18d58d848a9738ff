-- fast_path.lua: take.lua for the most common call, one GCRA limit,
-- answered before the other algorithms are defined (Redis would build their
-- functions on every call, for nothing).
--
-- Part of the one script built from scripts/*.lua (order in common.lua).
--   KEYS, ARGV, Reply: those of take.lua, for #KEYS == 1 and ARGV[3] == '0'
--          (GCRA); any other call, valid or not, goes on to take.lua, which
--          would decide it exactly the same way.

if #KEYS == 1 and #ARGV == 6 and ARGV[3] == '0' then
  return take_one(KEYS[1], gcra(KEYS[1], clock(ARGV[1]), tonumber(ARGV[2]),
    tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])))
end
