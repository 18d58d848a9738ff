-- A minimal fixed_window take for measurements (callgrind.sh): the Redis commands, the ARGV
-- (rate, period) and the state fields of take_fixed_window, none of its rounding or edge cases.
local rate, period = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = (tonumber(t[1]) - 1704067200) * 1000000 + tonumber(t[2])
local s = redis.call('HMGET', KEYS[1], 'w', 'n')
local w, n = math.floor(now / period), 0
if tonumber(s[1]) == w then n = tonumber(s[2]) end
redis.call('HSET', KEYS[1], 'w', string.format('%d', w), 'n', string.format('%d', n + 1))
redis.call('PEXPIRE', KEYS[1], 1000)
return {1, 0, 1, 1, 0}
