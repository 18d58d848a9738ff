-- A minimal sliding_window take for measurements (callgrind.sh): the Redis commands, the ARGV
-- (rate, period) and the state fields of take_sliding_window, none of its rounding or edge cases; numbers
-- converted and sent as cheaply as the lean programs do, keys live for the whole run.
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local s = redis.call('HMGET', KEYS[1], 'w', 'n', 'p', 'd')
local w, n, p = math.floor(now / period), 0, 0
local stored = tonumber(s[1])
if stored == w then n, p = tonumber(s[2]), tonumber(s[3]) elseif stored == w - 1 then p = tonumber(s[2]) end
redis.call('HSET', KEYS[1], 'w', string.format('%d', w), 'n', string.format('%d', n + 1), 'p', string.format('%d', p), 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[1], '120000')
return {1, 0, 1, 1, 0}
