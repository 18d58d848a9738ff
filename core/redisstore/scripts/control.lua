-- control.lua: set, delete, touch or read the controls of one key prefix
-- (core.ControlStore). The program "control", of its own, self-contained.
-- Contract for other languages: docs/redis-protocol.md, "Controls".
--
-- KEYS     the five keys of the prefix P's controls, all under the hash tag
--          {~ctl} (one Cluster slot):
--   [1]    P:{~ctl}:r  hash: client id -> record (at most 4096 bytes)
--   [2]    P:{~ctl}:e  sorted set: client id scored by its record's expiry
--                      (µs since 2024-01-01T00:00:00Z); live while now < it
--   [3]    P:{~ctl}:l  sorted set, the change log: client id scored by the
--                      generation of its last change; the newest 4096 kept
--   [4]    P:{~ctl}:g  string: the generation of P's controls
--   [5]    P:{~ctl}:t  string: the newest generation no longer in the log
-- ARGV[1]  now: µs since 2024-01-01T00:00:00Z (test clocks only), or the
--          empty string to use the server's TIME (production).
-- ARGV[2]  the operation, then its arguments:
--          set    ARGV[3] id, ARGV[4] record, ARGV[5] expiry (µs, as now),
--                 or the empty string for none: the longest, 366 days
--          delete ARGV[3] id
--          touch  ARGV[3] id (a change of id that leaves its record)
--          read   ARGV[3] since, a generation (0: everything)
-- Reply    set, delete, touch: an array of one integer, the new generation.
--          read: gen, now, full (1/0), then three values per client: its
--          id, its expiry (0 when none) and its record (nil when none).
--          full is 1 when since is 0, below t, or above g (the store lost
--          its data): then every live record; else each client changed
--          after since, with its record now (nil when none or expired).
-- Writes   set, delete and touch only: each raises g by one (a prefix with
--          no g starts at now, with t = now and an empty log), logs its id,
--          purges up to 1024 expired records (earliest first) and logs them
--          under the same generation, trims the log to its newest 4096
--          (raising t to the newest generation dropped), and gives all
--          five keys a TTL of 366 days. read writes nothing.

local MAX_AGE = 31622400000000 -- µs: 366 days (core.MaxControlAge)
local MAX_AGE_MS = '31622400000'
local MAX_LOG = 4096 -- changes logged (core.ControlLogLen)
local MAX_PURGE = 1024 -- expired records purged per write
local MAX_RECORD = 4096 -- bytes (core.MaxControlSize)
local EPOCH = 1704067200 -- 2024-01-01T00:00:00Z in Unix seconds

if #KEYS ~= 5 then
  return redis.error_reply('ERR ratelimit: control: ' .. #KEYS .. ' KEYS, want 5')
end
local r, e, l, g, t = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op, id = ARGV[2], ARGV[3]

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  if redis.replicate_commands then
    redis.replicate_commands() -- Redis < 5: allow writes after TIME
  end
  local time = redis.call('TIME')
  now = (tonumber(time[1]) - EPOCH) * 1000000 + tonumber(time[2])
end

-- As strings: Redis formats a Lua number with "%.17g" (take_gcra.lua).
local function int(x)
  return string.format('%d', x)
end

if op == 'read' then
  local since = tonumber(ARGV[3])
  if not since then
    return redis.error_reply('ERR ratelimit: control: read needs since, a generation')
  end
  local gen = tonumber(redis.call('GET', g)) or 0
  local trimmed = tonumber(redis.call('GET', t)) or 0
  local reply = {gen, now, 0}
  if since == 0 or since < trimmed or gen < since then
    reply[3] = 1
    local live = redis.call('ZRANGEBYSCORE', e, '(' .. int(now), '+inf', 'WITHSCORES')
    for i = 1, #live, 2 do
      local v = redis.call('HGET', r, live[i])
      if v then
        reply[#reply + 1], reply[#reply + 2], reply[#reply + 3] = live[i], tonumber(live[i + 1]), v
      end
    end
    return reply
  end
  for _, who in ipairs(redis.call('ZRANGEBYSCORE', l, '(' .. int(since), '+inf')) do
    local expiry, v = tonumber(redis.call('ZSCORE', e, who)), false
    if expiry and now < expiry then
      v = redis.call('HGET', r, who) or false
    end
    if not v then
      expiry = 0
    end
    reply[#reply + 1], reply[#reply + 2], reply[#reply + 3] = who, expiry, v
  end
  return reply
end

if op ~= 'set' and op ~= 'delete' and op ~= 'touch' then
  return redis.error_reply('ERR ratelimit: control: unknown operation ' .. tostring(op))
end
if not id or id == '' then
  return redis.error_reply('ERR ratelimit: control: ' .. op .. ' needs a client id')
end
if op == 'set' and (not ARGV[4] or #ARGV[4] == 0 or #ARGV[4] > MAX_RECORD) then
  return redis.error_reply('ERR ratelimit: control: a record is 1 to ' .. MAX_RECORD .. ' bytes')
end

-- write makes the change and returns its generation. It runs under pcall:
-- a command that fails (a key of the wrong type, written by something
-- else) ends the script without undoing what it wrote, so the TTLs are set
-- whatever happens.
local function write()
  local gen = tonumber(redis.call('GET', g))
  if not gen then -- a new prefix, or one whose keys were lost
    gen = math.max(now, 0)
    redis.call('DEL', l)
    redis.call('SET', t, int(gen))
  end
  gen = gen + 1
  local sgen = int(gen)
  redis.call('SET', g, sgen)
  if op == 'set' then
    local expiry = tonumber(ARGV[5]) or now + MAX_AGE
    redis.call('HSET', r, id, ARGV[4])
    redis.call('ZADD', e, int(math.min(expiry, now + MAX_AGE)), id)
  elseif op == 'delete' then
    redis.call('HDEL', r, id)
    redis.call('ZREM', e, id)
  end
  redis.call('ZADD', l, sgen, id)

  -- Purge: the expired records, earliest first, logged as changes.
  for _, who in ipairs(redis.call('ZRANGEBYSCORE', e, '-inf', int(now), 'LIMIT', 0, MAX_PURGE)) do
    redis.call('HDEL', r, who)
    redis.call('ZREM', e, who)
    redis.call('ZADD', l, sgen, who)
  end

  -- Trim the log to its newest MAX_LOG changes (by generation, then id).
  local over = redis.call('ZCARD', l) - MAX_LOG
  if over > 0 then
    local dropped = tonumber(redis.call('ZRANGE', l, over - 1, over - 1, 'WITHSCORES')[2])
    redis.call('ZREMRANGEBYRANK', l, 0, over - 1)
    if dropped > (tonumber(redis.call('GET', t)) or 0) then
      redis.call('SET', t, int(dropped))
    end
  end
  return gen
end

local ok, gen = pcall(write)
for i = 1, 5 do
  redis.call('PEXPIRE', KEYS[i], MAX_AGE_MS)
end
if not ok then
  if type(gen) == 'table' and gen.err then
    return redis.error_reply(gen.err) -- the failed command's error reply
  end
  return redis.error_reply('ERR ratelimit: control: ' .. tostring(gen))
end
return {gen}
