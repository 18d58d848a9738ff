-- take.lua: take cost from every limit of one client, all or nothing.
-- The entry point of the program "take" built from scripts/*.lua (how:
-- common.lua), which the Go store runs for takes of several limits and of
-- one calendar or concurrency limit or limit with a lockout (one limit of
-- another algorithm runs take_<algorithm>.lua, built from the same
-- algorithm file; this program decides it alike).
-- Contract for other languages: docs/redis-protocol.md.
--
-- KEYS[i]  for i = 1 .. n, the state key of limit i,
--          <prefix>:{<identity>}:<name>:<tag>; then KEYS[n + j], the
--          lockout key <prefix>:{<identity>}:<name>:x of the j-th limit with
--          a lockout, in the order of the limits (lockout.lua): #KEYS is
--          n + m, m limits having a lockout. All KEYS share the {identity}
--          hash tag (one Cluster slot).
-- ARGV[1]  now: µs since 2024-01-01T00:00:00Z (test clocks only), or the
--          empty string to use the server's TIME (production).
-- ARGV[2]  cost: non-negative integer; 0 peeks (charges nothing).
-- ARGV[3 + 4(i-1) ...] per limit i, four integers:
--          algorithm (0 GCRA, 1 token bucket, 2 fixed window,
--          3 sliding window, 4 sliding log, 5 calendar window,
--          6 concurrency; plus 16 for a limit with a lockout), rate
--          (requests per period; concurrency: most in flight), period (µs;
--          concurrency: the lease TTL), capacity (burst; the rate for window
--          algorithms and concurrency). A calendar window's fourth value is
--          instead the ARGV index of its six boundaries (µs since
--          2024-01-01T00:00:00Z, see calendar_window.lua), which follow the
--          four values of every limit, in KEYS order.
-- ARGV[...] after the boundaries of every calendar window, six integers per
--          limit with a lockout, in KEYS order: after (denials), within
--          (µs), for (µs), multiplier, max (µs), cooldown (µs), the
--          defaults of core.Lockout applied (lockout.lua). A concurrency
--          limit has no lockout.
-- ARGV[last] the lease id, after all of these: held by every concurrency
--          limit of an admitted take of cost > 0 (concurrency.lua); needed
--          then, optional for a peek, refused without a concurrency limit.
--          So #ARGV is 2 + 4n + 6c + 6m (c calendar windows and m limits
--          with a lockout among the n limits), plus 1 with a lease id.
-- Reply    a flat array of 5 integers per limit, in KEYS order:
--          allowed (1/0), reason (0 not denied, 1 exhausted, 2 cost too high,
--          3 locked out), remaining (whole requests), reset_after (µs),
--          retry_after (µs). remaining and reset_after are after the charge
--          when every limit admitted, before it otherwise.
-- Lockouts When a lockout key's u is after now, the take (a peek too) is
--          denied and charges and counts nothing: that limit replies
--          {0, 3, 0, max(reset, u - now), u - now}, the others their peek.
--          Otherwise, when the take is denied and cost > 0, each limit with
--          a lockout that itself replied exhausted counts the denial
--          (lockout.lua), and replies locked out when that starts a lockout.
-- Writes   only when every limit admits and cost > 0; every key written gets
--          its TTL (PX / PEXPIRE) here. Denials and peeks write nothing, the
--          pruning of the sliding log's expired entries and of expired
--          leases, and the lockout keys of denials counted, aside.

local ALGORITHMS = {[0] = gcra, [1] = token_bucket, [2] = fixed_window, [3] = sliding_window, [4] = sliding_log,
  [5] = calendar_window, [6] = concurrency}
local CALENDAR_WINDOW, CONCURRENCY = 5, 6
local CALENDAR_BOUNDARIES = 6 -- ARGV values per calendar window
local LOCKOUT, LOCKOUT_VALUES = 16, 6 -- added to the algorithm of a limit with a lockout; its ARGV values

-- n limits, m of them with a lockout, which have a second key: #KEYS is
-- n + m. Read as if none had one, the loop of takes without lockouts; from
-- the first limit with a lockout on, read again knowing it.
local n, m, calendars, leased, lockouts = #KEYS, 0, 0, false, nil
if #ARGV < 2 + 4 * n then -- a lockout key comes with 6 values: at least 4
  return redis.error_reply('ERR ratelimit: ' .. #ARGV .. ' ARGV for ' .. n .. ' KEYS, want 2 + 4 per key')
end
for i = 1, n do
  local alg = tonumber(ARGV[4 * i - 1])
  if ALGORITHMS[alg] == nil then
    if not alg or alg < LOCKOUT then
      return redis.error_reply('ERR ratelimit: unknown algorithm ' .. ARGV[4 * i - 1])
    end
    lockouts = i
    break
  end
  if alg == CALENDAR_WINDOW then
    calendars = calendars + 1
  end
  leased = leased or alg == CONCURRENCY
end
if lockouts then
  -- lockouts[i] is the index among the limits with a lockout of limit i.
  local i, nkeys = lockouts - 1, n
  lockouts = {}
  while i + m < nkeys do
    i = i + 1
    local alg = tonumber(ARGV[4 * i - 1]) or -1 -- not a number: an unknown algorithm
    if alg >= LOCKOUT then
      alg, m = alg - LOCKOUT, m + 1
      ARGV[4 * i - 1] = alg -- evaluate reads the algorithm alone, as for takes without lockouts
      lockouts[i] = m
      if alg == CONCURRENCY then
        return redis.error_reply('ERR ratelimit: limit ' .. i .. ': a concurrency limit has no lockout')
      end
    end
    if ALGORITHMS[alg] == nil then
      return redis.error_reply('ERR ratelimit: unknown algorithm ' .. ARGV[4 * i - 1])
    end
    if alg == CALENDAR_WINDOW then
      calendars = calendars + 1
    end
    leased = leased or alg == CONCURRENCY
  end
  n = i
  if n + m ~= nkeys then
    return redis.error_reply('ERR ratelimit: ' .. nkeys .. ' KEYS for ' .. n .. ' limits, ' .. m ..
      ' of them with a lockout: want one key per limit and one per lockout')
  end
end
local want = 2 + 4 * n -- then the boundaries of the calendar windows, then the lockouts' values
if calendars > 0 then
  local first = want + 1
  for i = 1, n do
    if ARGV[4 * i - 1] + 0 == CALENDAR_WINDOW then
      if tonumber(ARGV[4 * i + 2]) ~= first then
        return redis.error_reply('ERR ratelimit: limit ' .. i .. ': boundaries at ARGV ' .. ARGV[4 * i + 2] ..
          ', want ' .. first)
      end
      for b = first, math.min(first + CALENDAR_BOUNDARIES - 1, #ARGV) do -- missing ones: the count check
        if tonumber(ARGV[b]) == nil then
          return redis.error_reply('ERR ratelimit: limit ' .. i .. ': boundary ARGV ' .. b .. ' is not a number')
        end
      end
      first = first + CALENDAR_BOUNDARIES
    end
  end
  want = first - 1
end
local lockout_values = want + 1 -- the values of lockout j start at lockout_values + 6 (j - 1)
if m > 0 then
  want = want + LOCKOUT_VALUES * m
  for b = lockout_values, math.min(want, #ARGV) do -- missing ones: the count check
    if tonumber(ARGV[b]) == nil then
      return redis.error_reply('ERR ratelimit: lockout value ARGV ' .. b .. ' is not a number')
    end
  end
end
if #ARGV ~= want and not (leased and #ARGV == want + 1) then
  local also = ''
  if leased then
    also = ' (+ 1 lease id)'
  end
  return redis.error_reply('ERR ratelimit: ' .. #ARGV .. ' ARGV for ' .. #KEYS .. ' KEYS, want ' .. want .. also)
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

if n == 1 and not lockouts then -- for one limit, all or nothing is that limit's own answer
  return charged(KEYS[1], evaluate(1, cost))
end

local reply = {}

-- Several limits: evaluate all, then charge only if all admit. A limit that
-- admits while another denies replies the state before the take, what a
-- peek (cost 0) of it replies. A take with a lockout goes on in
-- lockout.lua, which defines its functions there: Redis runs the whole
-- program on every call, and a take without one never gets that far.
if not lockouts then
  local evaluations, all_allowed = {}, true
  for i = 1, n do
    local e = {evaluate(i, cost)} -- the reply, then the charge and its arguments
    all_allowed = all_allowed and e[1][1] == 1 -- the reply's allowed
    evaluations[i] = e
  end
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
end
