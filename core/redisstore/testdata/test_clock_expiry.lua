-- test_clock_expiry.lua: for the redisstore tests only, never in production.
--
-- Prepended to each program by NewWithTestClockExpiry (export_test.go),
-- so that the program's TTLs run on the test clock (ARGV[1] of the program
-- "take", the last ARGV of the one-limit programs, where
-- NewWithTestClockExpiry makes the line below read ARGV[#ARGV]) instead of the
-- server's own clock, as a memstore's expiries do. Without it, a key with a
-- TTL of 1 ms vanishes in real time while its state is live on a test clock
-- that stands still, and a key whose state is long back to its default on
-- the test clock is still there when that clock jumps back, so the two
-- stores could not be compared take for take (storetest.RunDifferential).
--
-- Every PEXPIRE key ms and SET key value PX ms of the script records the
-- test-clock instant now + ms·1000 µs in the string <key>|expiry, and gives
-- both keys a real TTL of 10 minutes instead. Before the script runs, each
-- of its KEYS whose recorded instant is before now is deleted, as a memstore
-- removes an expired entry when a take looks it up.
--   KEYS, ARGV, reply: those of the program (lease.lua's ARGV[1] is now,
--          as take.lua's); it must have a test clock.

local test_redis = redis
local test_now = tonumber(ARGV[1])
for i = 1, #KEYS do
  local expiry = tonumber(test_redis.call('GET', KEYS[i] .. '|expiry'))
  if expiry and test_now > expiry then
    test_redis.call('DEL', KEYS[i], KEYS[i] .. '|expiry')
  end
end

local function test_expire(key, ms)
  test_redis.call('SET', key .. '|expiry', string.format('%d', test_now + tonumber(ms) * 1000), 'PX', 600000)
end

local redis = setmetatable({
  call = function(cmd, ...)
    local args = {...}
    if cmd == 'PEXPIRE' then
      test_expire(args[1], args[2])
      return test_redis.call('PEXPIRE', args[1], 600000)
    elseif cmd == 'SET' and args[3] == 'PX' then
      test_expire(args[1], args[4])
      return test_redis.call('SET', args[1], args[2], 'PX', 600000)
    end
    return test_redis.call(cmd, ...)
  end,
}, {__index = test_redis})
