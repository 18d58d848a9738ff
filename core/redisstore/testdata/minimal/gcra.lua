-- A minimal gcra take for measurements (callgrind.sh): the Redis commands, the ARGV
-- (rate, period) and the state fields of take_gcra, none of its rounding or edge cases; numbers
-- converted and sent as cheaply as the lean programs do, keys live for the whole run.
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or now), now)
redis.call('SET', KEYS[1], string.format('%.17g', tat + 1), 'PX', '60000')
return {1, 0, 1, 1, 0}
