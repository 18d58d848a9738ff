-- take.lua: take cost from every limit of one client, all or nothing.
-- The entry point of the one script built from scripts/*.lua (order in
-- common.lua). Contract for other languages: docs/redis-protocol.md.
--
-- KEYS[i]  the state key of limit i, <prefix>:{<identity>}:<name>:<tag>;
--          all KEYS share the {identity} hash tag (one Cluster slot).
-- ARGV[1]  now: µs since 2024-01-01T00:00:00Z (test clocks only), or the
--          empty string to use the server's TIME (production).
-- ARGV[2]  cost: non-negative integer; 0 peeks (charges nothing).
-- ARGV[3 + 4(i-1) ...] per limit i, four integers:
--          algorithm (0 GCRA, 1 token bucket, 2 fixed window,
--          3 sliding window, 4 sliding log), rate (requests per period),
--          period (µs), capacity (burst; the rate for window algorithms).
-- Reply    a flat array of 5 integers per limit, in KEYS order:
--          allowed (1/0), reason (0 not denied, 1 exhausted, 2 cost too high),
--          remaining (whole requests), reset_after (µs), retry_after (µs).
--          remaining and reset_after are after the charge when every limit
--          admitted, before it otherwise.
-- Writes   only when every limit admits and cost > 0; every key written gets
--          its TTL (PX / PEXPIRE) here. Denials and peeks write nothing, the
--          sliding log's pruning of expired entries aside.

-- EPOCH is 2024-01-01T00:00:00Z in Unix seconds.
local EPOCH = 1704067200

local ALGORITHMS = {[0] = gcra, [1] = token_bucket, [2] = fixed_window, [3] = sliding_window, [4] = sliding_log}

-- clock returns now in µs since EPOCH: the test clock arg, or TIME.
local function clock(arg)
  if arg ~= '' then
    return tonumber(arg)
  end
  if redis.replicate_commands then
    redis.replicate_commands() -- Redis < 5: allow writes after TIME
  end
  local t = redis.call('TIME')
  return (tonumber(t[1]) - EPOCH) * 1000000 + tonumber(t[2])
end

if #ARGV ~= 2 + 4 * #KEYS then
  return redis.error_reply('ERR ratelimit: ' .. #ARGV .. ' ARGV for ' .. #KEYS .. ' KEYS, want 2 + 4 per key')
end
local now, cost = clock(ARGV[1]), tonumber(ARGV[2])

local results, all_allowed = {}, true
for i, key in ipairs(KEYS) do
  local a = 4 * i - 1
  local algorithm = ALGORITHMS[tonumber(ARGV[a])]
  if algorithm == nil then
    return redis.error_reply('ERR ratelimit: unknown algorithm ' .. ARGV[a])
  end
  local r = algorithm(key, now, cost, tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]))
  all_allowed = all_allowed and r.allowed
  results[i] = r
end

local reply = {}
for _, r in ipairs(results) do
  local remaining, reset = r.remaining_before, r.reset_before
  if all_allowed then
    if r.write then
      r.write()
    end
    remaining, reset = r.remaining_after, r.reset_after
  end
  local allowed = 0
  if r.allowed then
    allowed = 1
  end
  reply[#reply + 1] = allowed
  reply[#reply + 1] = r.reason
  reply[#reply + 1] = math.max(0, remaining) -- a rate lowered under a live key may be overdrawn
  reply[#reply + 1] = reset
  reply[#reply + 1] = r.retry
end
return reply
