-- A minimal sliding_log take for measurements (callgrind.sh): the Redis commands, the ARGV
-- (rate, period) and the state fields of take_sliding_log, none of its rounding or edge cases; numbers
-- converted and sent as cheaply as the lean programs do, keys live for the whole run.
local rate, period = ARGV[1] + 0, ARGV[2] + 0
local t = redis.call('TIME')
local now = (t[1] - 1704067200) * 1000000 + t[2]
local newest = redis.call('ZRANGE', KEYS[1], '-1', '-1', 'WITHSCORES')
local at = math.max(now, tonumber(newest[2]) or now)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', at - period))
local u = 0
if newest[1] then
  local first = redis.call('ZRANGE', KEYS[1], '0', '0')[1]
  u = tonumber((string.match(newest[1], '^r(%d+):')))
end
redis.call('ZADD', KEYS[1], string.format('%d', at), 'r' .. string.format('%d', u + 1) .. ':1')
redis.call('PEXPIRE', KEYS[1], '60000')
return {1, 0, 1, 1, 0}
