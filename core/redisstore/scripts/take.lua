-- take.lua: take cost from every limit of one client, all or nothing.
-- The entry point of the program "take" built from scripts/*.lua (order in
-- common.lua), which the Go store runs for takes of several limits and of
-- one calendar or concurrency limit (one limit of another algorithm runs
-- take_<algorithm>.lua; this program decides it alike).
-- Contract for other languages: docs/redis-protocol.md.
--
-- KEYS[i]  the state key of limit i, <prefix>:{<identity>}:<name>:<tag>;
--          all KEYS share the {identity} hash tag (one Cluster slot).
-- ARGV[1]  now: µs since 2024-01-01T00:00:00Z (test clocks only), or the
--          empty string to use the server's TIME (production).
-- ARGV[2]  cost: non-negative integer; 0 peeks (charges nothing).
-- ARGV[3 + 4(i-1) ...] per limit i, four integers:
--          algorithm (0 GCRA, 1 token bucket, 2 fixed window,
--          3 sliding window, 4 sliding log, 5 calendar window,
--          6 concurrency), rate (requests per period; concurrency: most in
--          flight), period (µs; concurrency: the lease TTL), capacity
--          (burst; the rate for window algorithms and concurrency). A
--          calendar window's fourth value is instead the ARGV index of its
--          six boundaries (µs since 2024-01-01T00:00:00Z, see
--          calendar_window.lua), which follow the four values of every
--          limit, in KEYS order.
-- ARGV[last] the lease id, after the values of every limit and the
--          boundaries of every calendar window: held by every concurrency
--          limit of an admitted take of cost > 0 (concurrency.lua); needed
--          then, optional for a peek, refused without a concurrency limit.
--          So #ARGV is 2 + 4n + 6c (c calendar windows among the n
--          limits), plus 1 with a lease id.
-- Reply    a flat array of 5 integers per limit, in KEYS order:
--          allowed (1/0), reason (0 not denied, 1 exhausted, 2 cost too high),
--          remaining (whole requests), reset_after (µs), retry_after (µs).
--          remaining and reset_after are after the charge when every limit
--          admitted, before it otherwise.
-- Writes   only when every limit admits and cost > 0; every key written gets
--          its TTL (PX / PEXPIRE) here. Denials and peeks write nothing, the
--          pruning of the sliding log's expired entries and of expired
--          leases aside.

local ALGORITHMS = {[0] = gcra, [1] = token_bucket, [2] = fixed_window, [3] = sliding_window, [4] = sliding_log,
  [5] = calendar_window, [6] = concurrency}
local CALENDAR_WINDOW, CONCURRENCY = 5, 6
local CALENDAR_BOUNDARIES = 6 -- ARGV values per calendar window

local n = #KEYS
if #ARGV < 2 + 4 * n then
  return redis.error_reply('ERR ratelimit: ' .. #ARGV .. ' ARGV for ' .. n .. ' KEYS, want 2 + 4 per key')
end
local want = 2 + 4 * n -- and the boundaries of the calendar windows
local leased = false -- a concurrency limit among KEYS
for i = 1, n do
  local alg = tonumber(ARGV[4 * i - 1])
  if ALGORITHMS[alg] == nil then
    return redis.error_reply('ERR ratelimit: unknown algorithm ' .. ARGV[4 * i - 1])
  end
  if alg == CALENDAR_WINDOW then
    if tonumber(ARGV[4 * i + 2]) ~= want + 1 then
      return redis.error_reply('ERR ratelimit: limit ' .. i .. ': boundaries at ARGV ' .. ARGV[4 * i + 2] ..
        ', want ' .. (want + 1))
    end
    for b = want + 1, math.min(want + CALENDAR_BOUNDARIES, #ARGV) do -- missing ones: the count check
      if tonumber(ARGV[b]) == nil then
        return redis.error_reply('ERR ratelimit: limit ' .. i .. ': boundary ARGV ' .. b .. ' is not a number')
      end
    end
    want = want + CALENDAR_BOUNDARIES
  end
  leased = leased or alg == CONCURRENCY
end
if #ARGV ~= want and not (leased and #ARGV == want + 1) then
  local also = ''
  if leased then
    also = ' (+ 1 lease id)'
  end
  return redis.error_reply('ERR ratelimit: ' .. #ARGV .. ' ARGV for ' .. n .. ' KEYS, want ' .. want .. also)
end
local lease = ARGV[want + 1]
if leased and ARGV[2] ~= '0' and (lease == nil or lease == '') then
  return redis.error_reply('ERR ratelimit: a concurrency limit needs a lease id for cost ' .. ARGV[2])
end
local now, cost = clock(ARGV[1]), tonumber(ARGV[2])

-- evaluate runs the algorithm of limit i and returns its values (listed
-- in common.lua). Its four values are numbers (the algorithm checked
-- above), converted once each (x + 0, common.lua).
local function evaluate(i)
  local a = 4 * i - 1
  return ALGORITHMS[ARGV[a] + 0](KEYS[i], now, cost, ARGV[a + 1] + 0, ARGV[a + 2] + 0, ARGV[a + 3] + 0, lease)
end

if n == 1 then
  return take_one(KEYS[1], evaluate(1))
end

-- Several limits: evaluate all, then write only if all admit.
local results, all_allowed = {}, true
for i = 1, n do
  local r = {evaluate(i)}
  all_allowed = all_allowed and r[1] == 0
  results[i] = r
end
local reply = {}
for i, r in ipairs(results) do
  local allowed, remaining, reset = 0, r[2], r[3]
  if r[1] == 0 then
    allowed = 1
  end
  if all_allowed then
    if r[7] then
      r[7](KEYS[i], r[8], r[9], r[10], r[11])
    end
    remaining, reset = r[5], r[6]
  end
  local o = 5 * (i - 1)
  reply[o + 1] = allowed
  reply[o + 2] = r[1]
  reply[o + 3] = math.max(0, remaining) -- a rate lowered under a live key may be overdrawn
  reply[o + 4] = reset
  reply[o + 5] = r[4]
end
return reply
