-- take.lua: take cost from every limit of one client, all or nothing.
-- The entry point of the program "take" built from scripts/*.lua (how:
-- common.lua), which the Go store runs for takes of several limits and of
-- one calendar or concurrency limit (one limit of another algorithm runs
-- take_<algorithm>.lua, built from the same algorithm file; this program
-- decides it alike).
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

-- evaluate runs the algorithm of limit i for a take of cost c: its reply,
-- then, when it admits with c > 0, its charge and the charge's arguments
-- (common.lua). Its four values are numbers (the algorithm checked above),
-- converted once each (x + 0, common.lua).
local function evaluate(i, c)
  local a = 4 * i - 1
  return ALGORITHMS[ARGV[a] + 0](KEYS[i], now, c, ARGV[a + 1] + 0, ARGV[a + 2] + 0, ARGV[a + 3] + 0, lease)
end

-- charged runs the charge of an evaluation on key, if it has one, and
-- returns its reply.
local function charged(key, reply, charge, ...)
  if charge then
    charge(key, ...)
  end
  return reply
end

if n == 1 then -- for one limit, all or nothing is that limit's own answer
  return charged(KEYS[1], evaluate(1, cost))
end

-- Several limits: evaluate all, then charge only if all admit. A limit
-- that admits while another denies replies the state before the take,
-- what a peek (cost 0) of it replies.
local evaluations, all_allowed = {}, true
for i = 1, n do
  local e = {evaluate(i, cost)} -- the reply, then the charge and its arguments
  all_allowed = all_allowed and e[1][1] == 1 -- the reply's allowed
  evaluations[i] = e
end
local reply = {}
for i, e in ipairs(evaluations) do
  local r = e[1]
  if all_allowed then
    charged(KEYS[i], unpack(e))
  elseif r[1] == 1 then
    r = evaluate(i, 0)
  end
  for _, v in ipairs(r) do -- the whole reply: a longer one fails the caller's count
    reply[#reply + 1] = v
  end
end
return reply
