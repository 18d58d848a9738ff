-- A minimal token_bucket take for measurements (callgrind.sh): the Redis commands, the ARGV
-- (rate, period) and the state fields of take_token_bucket, none of its rounding or edge cases; numbers
-- converted and sent as cheaply as the lean programs do, keys live for the whole run.
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local s = redis.call('HMGET', KEYS[1], 'tk', 'ts')
local tk, ts = tonumber(s[1]) or rate, tonumber(s[2]) or now
tk = math.min(rate, tk + (now - ts) * rate / period) - 1
redis.call('HSET', KEYS[1], 'tk', string.format('%.17g', tk), 'ts', string.format('%d', now))
redis.call('PEXPIRE', KEYS[1], '60000')
return {1, 0, 1, 1, 0}
