-- schema.sql: the PostgreSQL store of ratelimit (core/pgstore), schema
-- version 2. pgstore.New runs it, and `ratelimit pg-schema` prints it for a
-- migration tool. It is idempotent and runs as one transaction, serialised
-- with every other node doing the same by an advisory lock.
--
-- Version 2 keeps, in ts, the window length a fixed or sliding window row
-- counts in, so that a limit whose period changes reads its windows right
-- (docs/algorithms.md, "When the period changes"); the table is version
-- 1's, and a row of version 1 (ts 0) counts in the limit's period.
--
-- {{schema}} and {{table}} are the schema and table the user chose
-- (validated identifiers, quoted); the functions are named after the table:
-- {{take}}, {{release}}, {{renew}} and {{sweep}}. {{lock}} is the first key
-- of the advisory locks the functions take (a hash of the table's name),
-- {{migration_lock}} that of the migration's (a hash of "ratelimit pgstore
-- migration"), {{unlogged}} is UNLOGGED or empty.
--
-- Units: every time is whole microseconds since 2024-01-01T00:00:00Z (a
-- bigint), the epoch of core/memstore and the Redis scripts, every
-- duration whole microseconds; the arithmetic of the algorithms is done in
-- double precision, operation by operation as core/memstore does it in
-- float64, so that both stores give the same decisions bit for bit
-- (docs/algorithms.md). A double is cast to bigint only after floor, ceil
-- or trunc: PostgreSQL's cast rounds to the nearest, Go's truncates.

-- One migration at a time in the database, whatever the table: two
-- concurrent CREATE SCHEMA IF NOT EXISTS of one schema would collide.
SELECT pg_advisory_xact_lock({{migration_lock}}, 0);

CREATE SCHEMA IF NOT EXISTS {{schema}};

-- One row per key (one limit of one client). expire_at is when the row
-- stops mattering: a row with expire_at < now reads as absent, and
-- {{sweep}} deletes such rows. Only the primary key is indexed, so that a
-- take's update is a HOT update (no index write); the fill factor leaves
-- room on each page for it.
CREATE {{unlogged}} TABLE IF NOT EXISTS {{schema}}.{{table}} (
  key       text COLLATE "C" PRIMARY KEY,
  alg       smallint NOT NULL,         -- core.Algorithm
  expire_at bigint NOT NULL,           -- µs; absent once now > expire_at
  x         double precision NOT NULL DEFAULT 0, -- GCRA: tat (µs); token bucket: tokens
  ts        bigint NOT NULL DEFAULT 0, -- token bucket: time of the last refill (µs); fixed, sliding: window length (µs), 0 the period
  w         bigint NOT NULL DEFAULT 0, -- fixed, sliding: window number (of length ts); calendar: window start (µs)
  n         bigint NOT NULL DEFAULT 0, -- window count; sliding log: units in the log
  p         bigint NOT NULL DEFAULT 0, -- sliding window: count of window w - 1
  log_at    bigint[],                  -- sliding log: times of runs of units, oldest first
  log_n     bigint[],                  -- sliding log: units of each run
  lease_id  text[],                    -- concurrency: leases held...
  lease_exp bigint[],                  -- ...and when each expires (µs)
  tomb_id   text[],                    -- concurrency: leases released before their take ran...
  tomb_exp  bigint[]                   -- ...and when each tombstone expires (µs)
) WITH (fillfactor = 70);

-- {{take}} charges p_cost to every limit i, stored under p_keys[i], if
-- every limit admits it, else to none, and returns one row per limit, in
-- order: allowed, reason (0 admitted, 1 exhausted, 2 cost too high),
-- remaining (whole requests), reset_after and retry_after (µs).
--   p_algs, p_rates, p_periods (µs), p_caps: the limits (core.Limit:
--     Algorithm, Rate, Period, Capacity());
--   p_bounds: for each calendar window limit, in order, six window
--     boundaries (µs) around the app's clock (core.Calendar.Boundaries);
--     the database's clock picks the window;
--   p_now: the time (µs) of a test clock, or NULL for the database's
--     clock, clock_timestamp() read once the keys are locked;
--   p_lease: the lease id a concurrency limit holds when admitted, or NULL;
--   p_sync: false commits a take that writes asynchronously
--     (synchronous_commit off for its transaction): it returns before its
--     WAL reaches the disk, and a crash of the server may lose the takes of
--     the last moments (at most three times wal_writer_delay), giving those
--     clients that quota back; true waits for the disk.
-- Locks: one transaction-scoped advisory lock per key ({{lock}},
-- hashtext(key)), taken in increasing order, so that takes of one client
-- serialise and takes of several keys cannot deadlock; rows need not exist
-- to be locked.
CREATE OR REPLACE FUNCTION {{schema}}.{{take}}(
  p_keys text[], p_algs int[], p_rates bigint[], p_periods bigint[], p_caps bigint[],
  p_bounds bigint[], p_cost bigint, p_now bigint, p_lease text, p_sync boolean)
RETURNS TABLE (allowed boolean, reason int, remaining bigint, reset_after bigint, retry_after bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  nk int := cardinality(p_keys);
  now_us bigint;
  r {{schema}}.{{table}};
  st {{schema}}.{{table}}[];           -- the state to write, per limit
  ok boolean[];                        -- per limit: admits the take
  why int[];
  rem_b bigint[]; rem_a bigint[];      -- remaining before and after the charge
  rst_b bigint[]; rst_a bigint[];      -- reset before and after
  wait bigint[];
  ttl bigint[];                        -- how long the written state lives (µs)
  pruned boolean[];                    -- concurrency: expired leases dropped
  stale boolean[];                     -- the row expired
  admitted boolean := true;
  found_ boolean;
  bi int := 1;                         -- next calendar boundaries in p_bounds
  h int;
  -- per algorithm
  t float8; bt float8; b float8; c float8; nf float8; tat float8; lft float8;
  new_tat float8; allow_at float8; tokens float8;
  at_ bigint; lag bigint; win bigint; len_w bigint; cnt bigint; e float8; pf float8; rf float8;
  cur float8; prev float8; used float8; aft float8; reset_ bigint; stop_ bigint; start_ bigint;
  k bigint; j int; len_ int; cut bigint;
  ids text[]; exps bigint[]; tids text[]; texps bigint[]; oldest bigint; newest bigint;
BEGIN
  IF nk = 1 THEN
    PERFORM pg_advisory_xact_lock({{lock}}, hashtext(p_keys[1]));
  ELSE
    FOR h IN SELECT DISTINCT hashtext(kk) FROM unnest(p_keys) kk ORDER BY 1 LOOP
      PERFORM pg_advisory_xact_lock({{lock}}, h);
    END LOOP;
  END IF;
  now_us := coalesce(p_now, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - 1704067200000000);

  FOR i IN 1 .. nk LOOP
    SELECT * INTO r FROM {{schema}}.{{table}} d WHERE d.key = p_keys[i];
    -- An expired row is absent; a take that writes nothing deletes it,
    -- as core/memstore drops an expired entry it touches, so that a clock
    -- stepped back cannot bring it back.
    stale[i] := r.key IS NOT NULL AND now_us > r.expire_at;
    found_ := r.key IS NOT NULL AND NOT stale[i] AND r.alg = p_algs[i];
    IF NOT found_ THEN
      r := ROW(p_keys[i], p_algs[i], 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL);
    END IF;
    ok[i] := false; why[i] := 0; wait[i] := 0; ttl[i] := 0; pruned[i] := false;
    rem_a[i] := NULL; rst_a[i] := NULL;

    IF p_algs[i] = 0 THEN -- GCRA: r.x is the theoretical arrival time tat
      t := p_periods[i]::float8 / p_rates[i]::float8;
      bt := p_caps[i]::float8 * t;
      nf := now_us::float8;
      tat := CASE WHEN found_ THEN greatest(r.x, nf) ELSE nf END;
      lft := bt - (tat - nf);
      rst_b[i] := greatest(0, ceil(tat - nf - 0.5))::bigint;
      rem_b[i] := greatest(0, floor(lft / t + 0.5 / t))::bigint;
      IF p_cost > 0 AND p_cost <= p_caps[i] THEN
        new_tat := tat + p_cost::float8 * t;
        allow_at := new_tat - bt;
        IF allow_at - nf > 0.5 THEN
          why[i] := 1; wait[i] := greatest(0, ceil(allow_at - nf - 0.5))::bigint;
        ELSE
          reset_ := greatest(0, ceil(new_tat - nf - 0.5))::bigint;
          ok[i] := true; rst_a[i] := reset_;
          rem_a[i] := greatest(0, floor((bt - (new_tat - nf)) / t + 0.5 / t))::bigint;
          r.x := new_tat;
        END IF;
      END IF;

    ELSIF p_algs[i] = 1 THEN -- token bucket: r.x tokens at time r.ts
      t := p_periods[i]::float8 / p_rates[i]::float8;
      b := p_caps[i]::float8;
      at_ := now_us; tokens := b;
      IF found_ THEN
        at_ := greatest(now_us, r.ts);
        tokens := least(b, r.x + (at_ - r.ts)::float8 / t);
      END IF;
      lag := at_ - now_us;
      rem_b[i] := greatest(0, floor(tokens + 0.5 / t))::bigint;
      rst_b[i] := greatest(0, ceil((b - tokens) * t - 0.5))::bigint;
      IF rst_b[i] > 0 THEN rst_b[i] := rst_b[i] + lag; END IF;
      IF p_cost > 0 AND p_cost <= p_caps[i] THEN
        c := p_cost::float8;
        IF (c - tokens) * t > 0.5 THEN
          why[i] := 1; wait[i] := greatest(0, ceil((c - tokens) * t - 0.5))::bigint + lag;
        ELSE
          lft := tokens - c;
          reset_ := greatest(0, ceil((b - lft) * t - 0.5))::bigint + lag;
          ok[i] := true; rst_a[i] := reset_;
          rem_a[i] := greatest(0, floor(lft + 0.5 / t))::bigint;
          r.x := lft; r.ts := at_;
        END IF;
      END IF;

    ELSIF p_algs[i] IN (2, 5) THEN -- fixed window, calendar window: r.w the window, r.n its count
      IF p_algs[i] = 2 THEN
        -- r.ts is the length r.w counts in; when it is not the period,
        -- the count belongs to the window holding the stored one's start.
        at_ := now_us;
        IF found_ THEN
          len_w := CASE WHEN r.ts = 0 THEN p_periods[i] ELSE r.ts END;
          at_ := greatest(now_us, r.w * len_w);
          IF len_w <> p_periods[i] THEN
            r.w := floor((r.w * len_w)::float8 / p_periods[i]::float8)::bigint;
          END IF;
        END IF;
        win := floor(at_::float8 / p_periods[i]::float8)::bigint;
        stop_ := (win + 1) * p_periods[i];
      ELSE
        at_ := now_us;
        IF found_ THEN at_ := greatest(now_us, r.w); END IF;
        start_ := NULL; stop_ := p_bounds[bi];
        FOR m IN bi + 1 .. bi + 5 LOOP
          IF stop_ <= at_ AND at_ < p_bounds[m] THEN
            start_ := stop_; stop_ := p_bounds[m];
            EXIT;
          END IF;
          stop_ := p_bounds[m];
        END LOOP;
        IF start_ IS NULL THEN
          RAISE EXCEPTION 'ratelimit: calendar: time % is outside the window boundaries % to % (µs since 2024-01-01): the app and database clocks disagree',
            at_, p_bounds[bi], p_bounds[bi + 5] USING ERRCODE = 'RLCAL';
        END IF;
        bi := bi + 6;
        win := start_;
      END IF;
      cnt := CASE WHEN found_ AND r.w = win THEN r.n ELSE 0 END;
      reset_ := stop_ - now_us;
      rem_b[i] := p_rates[i] - cnt;
      rst_b[i] := CASE WHEN cnt > 0 THEN reset_ ELSE 0 END;
      IF p_cost > 0 AND p_cost <= p_rates[i] THEN
        IF cnt + p_cost > p_rates[i] THEN
          why[i] := 1; wait[i] := reset_;
        ELSE
          ok[i] := true; rst_a[i] := reset_; rem_a[i] := p_rates[i] - cnt - p_cost;
          r.w := win; r.n := cnt + p_cost; r.x := 0; r.p := 0;
          r.ts := CASE WHEN p_algs[i] = 2 THEN p_periods[i] ELSE 0 END;
        END IF;
      END IF;

    ELSIF p_algs[i] = 3 THEN -- sliding window counter: r.n in window r.w, r.p in r.w - 1, of length r.ts
      at_ := now_us;
      len_w := CASE WHEN r.ts = 0 THEN p_periods[i] ELSE r.ts END;
      IF found_ THEN at_ := greatest(now_us, r.w * len_w); END IF;
      lag := at_ - now_us;
      win := floor(at_::float8 / p_periods[i]::float8)::bigint;
      pf := p_periods[i]::float8; rf := p_rates[i]::float8; c := p_cost::float8;
      e := at_::float8 - win::float8 * pf;
      cur := 0; prev := 0;
      IF NOT found_ THEN
        NULL;
      ELSIF len_w = p_periods[i] THEN
        IF r.w = win THEN cur := r.n; prev := r.p;
        ELSIF r.w = win - 1 THEN prev := r.n;
        END IF;
      ELSE -- the period changed: each count to the window holding its start
        k := floor((r.w * len_w)::float8 / pf)::bigint;
        IF k = win THEN cur := r.n; ELSIF k = win - 1 THEN prev := r.n; END IF;
        k := floor(((r.w - 1) * len_w)::float8 / pf)::bigint;
        IF k = win THEN cur := cur + r.p; ELSIF k = win - 1 THEN prev := prev + r.p; END IF;
      END IF;
      used := prev * (pf - e) + cur * pf;
      rem_b[i] := greatest(0, floor((rf * pf - used) / pf))::bigint;
      rst_b[i] := CASE WHEN cur > 0 THEN trunc(2 * pf - e)::bigint + lag
                       WHEN prev > 0 THEN trunc(pf - e)::bigint + lag ELSE 0 END;
      IF p_cost > 0 AND p_cost <= p_rates[i] THEN
        IF used + c * pf > rf * pf THEN
          why[i] := 1;
          IF cur + c <= rf AND prev > 0 THEN
            wait[i] := greatest(1, ceil(pf - e - (rf - cur - c) * pf / prev))::bigint + lag;
          ELSE
            wait[i] := greatest(1, ceil((pf - e) + pf - (rf - c) * pf / cur))::bigint + lag;
          END IF;
        ELSE
          cur := cur + c;
          aft := floor((rf * pf - prev * (pf - e) - cur * pf) / pf);
          reset_ := trunc(2 * pf - e)::bigint + lag;
          ok[i] := true; rst_a[i] := reset_; rem_a[i] := trunc(aft)::bigint;
          r.w := win; r.n := cur::bigint; r.p := prev::bigint; r.x := 0; r.ts := p_periods[i];
        END IF;
      END IF;

    ELSIF p_algs[i] = 4 THEN -- sliding log: runs of units, r.n units in all
      at_ := now_us; cnt := 0;
      len_ := coalesce(cardinality(r.log_at), 0);
      IF found_ AND len_ > 0 THEN
        at_ := greatest(now_us, r.log_at[len_]);
        cut := at_ - p_periods[i];
        j := 1; cnt := r.n;
        WHILE j <= len_ AND r.log_at[j] <= cut LOOP
          cnt := cnt - r.log_n[j]; j := j + 1;
        END LOOP;
        r.log_at := r.log_at[j:len_]; r.log_n := r.log_n[j:len_]; r.n := cnt;
        len_ := len_ - j + 1;
        -- Units that left the window are dropped even when nothing is
        -- charged, as core/memstore drops them: a clock stepped back must
        -- find the log as memstore does.
        pruned[i] := j > 1;
      ELSE
        r.log_at := '{}'; r.log_n := '{}'; r.n := 0; len_ := 0;
      END IF;
      rem_b[i] := p_rates[i] - cnt;
      rst_b[i] := CASE WHEN cnt > 0 THEN r.log_at[len_] + p_periods[i] - now_us ELSE 0 END;
      IF p_cost > 0 AND p_cost <= p_rates[i] THEN
        IF cnt + p_cost > p_rates[i] THEN
          why[i] := 1;
          k := cnt + p_cost - p_rates[i]; j := 1;
          WHILE j < len_ AND k > r.log_n[j] LOOP
            k := k - r.log_n[j]; j := j + 1;
          END LOOP;
          wait[i] := r.log_at[j] + p_periods[i] - now_us;
        ELSE
          reset_ := at_ + p_periods[i] - now_us;
          ok[i] := true; rst_a[i] := reset_; rem_a[i] := p_rates[i] - cnt - p_cost;
        END IF;
      END IF;

    ELSIF p_algs[i] = 6 THEN -- concurrency: leases held and tombstones, by expiry
      ids := '{}'; exps := '{}'; tids := '{}'; texps := '{}';
      cnt := 0; oldest := 0; newest := 0;
      IF found_ THEN
        FOR m IN 1 .. coalesce(cardinality(r.lease_id), 0) LOOP
          IF r.lease_exp[m] > now_us THEN
            ids := ids || r.lease_id[m]; exps := exps || r.lease_exp[m];
            IF cnt = 0 THEN oldest := r.lease_exp[m]; newest := r.lease_exp[m]; END IF;
            oldest := least(oldest, r.lease_exp[m]); newest := greatest(newest, r.lease_exp[m]);
            cnt := cnt + 1;
          END IF;
        END LOOP;
        FOR m IN 1 .. coalesce(cardinality(r.tomb_id), 0) LOOP
          IF r.tomb_exp[m] > now_us THEN
            tids := tids || r.tomb_id[m]; texps := texps || r.tomb_exp[m];
          END IF;
        END LOOP;
      END IF;
      -- Expired leases and tombstones are dropped even when nothing is
      -- charged, as core/memstore drops them: whether a release finds its
      -- lease held must not depend on the store.
      pruned[i] := found_ AND (cardinality(ids) < cardinality(r.lease_id) OR cardinality(tids) < cardinality(r.tomb_id));
      r.lease_id := ids; r.lease_exp := exps; r.tomb_id := tids; r.tomb_exp := texps;
      rem_b[i] := p_rates[i] - cnt;
      rst_b[i] := CASE WHEN cnt > 0 THEN newest - now_us ELSE 0 END;
      IF p_cost = 0 THEN
        ok[i] := true;
      ELSIF cnt >= p_rates[i] THEN
        why[i] := 1; wait[i] := least(oldest - now_us, 1000000);
      ELSE
        reset_ := greatest(rst_b[i], p_periods[i]);
        ok[i] := true; rst_a[i] := reset_; rem_a[i] := p_rates[i] - cnt - 1;
      END IF;
      IF p_cost = 0 THEN rem_a[i] := rem_b[i]; rst_a[i] := rst_b[i]; END IF;

    ELSE
      RAISE EXCEPTION 'ratelimit: unknown algorithm %', p_algs[i] USING ERRCODE = '22023';
    END IF;

    -- A cost above the capacity: denied, no wait helps. A peek: allowed.
    IF p_algs[i] <> 6 THEN
      IF p_cost > p_caps[i] THEN -- the capacity: Rate for the window algorithms
        why[i] := 2;
      ELSIF p_cost = 0 THEN
        ok[i] := true;
      END IF;
    END IF;
    IF rst_a[i] IS NOT NULL THEN
      ttl[i] := greatest(1, (rst_a[i] + 999) / 1000) * 1000;
    END IF;
    r.alg := p_algs[i];
    st[i] := r;
    admitted := admitted AND ok[i];
  END LOOP;

  IF NOT p_sync THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  IF admitted AND p_cost > 0 THEN
    FOR i IN 1 .. nk LOOP
      r := st[i];
      r.expire_at := now_us + ttl[i];
      IF p_algs[i] = 4 THEN -- the units, at the log's time
        len_ := cardinality(r.log_at);
        at_ := now_us;
        IF len_ > 0 THEN at_ := greatest(now_us, r.log_at[len_]); END IF;
        IF len_ > 0 AND r.log_at[len_] = at_ THEN
          r.log_n[len_] := r.log_n[len_] + p_cost;
        ELSE
          r.log_at := r.log_at || at_; r.log_n := r.log_n || p_cost;
        END IF;
        r.n := r.n + p_cost;
      ELSIF p_algs[i] = 6 THEN
        j := array_position(r.tomb_id, p_lease);
        IF j IS NOT NULL THEN -- released before this take ran: hold nothing
          r.tomb_id := r.tomb_id[:j - 1] || r.tomb_id[j + 1:];
          r.tomb_exp := r.tomb_exp[:j - 1] || r.tomb_exp[j + 1:];
        ELSE
          r.lease_id := r.lease_id || p_lease; r.lease_exp := r.lease_exp || (now_us + p_periods[i]);
        END IF;
      END IF;
      INSERT INTO {{schema}}.{{table}} AS d VALUES (r.*)
      ON CONFLICT (key) DO UPDATE SET alg = excluded.alg, expire_at = excluded.expire_at,
        x = excluded.x, ts = excluded.ts, w = excluded.w, n = excluded.n, p = excluded.p,
        log_at = excluded.log_at, log_n = excluded.log_n, lease_id = excluded.lease_id,
        lease_exp = excluded.lease_exp, tomb_id = excluded.tomb_id, tomb_exp = excluded.tomb_exp;
    END LOOP;
  ELSE
    FOR i IN 1 .. nk LOOP
      IF stale[i] THEN
        DELETE FROM {{schema}}.{{table}} d WHERE d.key = p_keys[i];
      ELSIF pruned[i] THEN
        r := st[i];
        UPDATE {{schema}}.{{table}} d SET n = r.n, log_at = r.log_at, log_n = r.log_n,
          lease_id = r.lease_id, lease_exp = r.lease_exp, tomb_id = r.tomb_id, tomb_exp = r.tomb_exp
        WHERE d.key = p_keys[i];
      END IF;
    END LOOP;
  END IF;

  FOR i IN 1 .. nk LOOP
    allowed := ok[i]; reason := why[i]; retry_after := wait[i];
    IF admitted AND p_cost > 0 THEN
      remaining := greatest(0, rem_a[i]); reset_after := rst_a[i];
    ELSE
      remaining := greatest(0, rem_b[i]); reset_after := rst_b[i];
    END IF;
    RETURN NEXT;
  END LOOP;
END
$fn$;

-- {{release}} gives lease p_lease back under p_key, a concurrency limit's
-- key whose lease TTL is p_period µs, and returns whether it was held. A
-- lease not held leaves a tombstone for p_period, so that a take of it
-- that has not run yet holds nothing (core.Leaser). p_now: as in {{take}}.
CREATE OR REPLACE FUNCTION {{schema}}.{{release}}(p_key text, p_period bigint, p_lease text, p_now bigint)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  now_us bigint;
  r {{schema}}.{{table}};
  live boolean;
  j int;
  reset_ bigint;
BEGIN
  PERFORM pg_advisory_xact_lock({{lock}}, hashtext(p_key));
  now_us := coalesce(p_now, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - 1704067200000000);
  SELECT * INTO r FROM {{schema}}.{{table}} d WHERE d.key = p_key;
  live := r.key IS NOT NULL AND now_us <= r.expire_at;
  IF live AND r.alg <> 6 THEN
    RETURN false; -- another algorithm's state: no lease of it
  END IF;
  IF live THEN
    j := array_position(r.lease_id, p_lease);
    IF j IS NOT NULL THEN
      r.lease_id := r.lease_id[:j - 1] || r.lease_id[j + 1:];
      r.lease_exp := r.lease_exp[:j - 1] || r.lease_exp[j + 1:];
      IF cardinality(r.lease_id) = 0 AND coalesce(cardinality(r.tomb_id), 0) = 0 THEN
        DELETE FROM {{schema}}.{{table}} d WHERE d.key = p_key;
      ELSE
        UPDATE {{schema}}.{{table}} d SET lease_id = r.lease_id, lease_exp = r.lease_exp WHERE d.key = p_key;
      END IF;
      RETURN true;
    END IF;
  ELSE
    r := ROW(p_key, 6, now_us, 0, 0, 0, 0, 0, NULL, NULL, '{}', '{}', '{}', '{}');
  END IF;
  r.tomb_id := coalesce(r.tomb_id, '{}') || p_lease;
  r.tomb_exp := coalesce(r.tomb_exp, '{}') || (now_us + p_period);
  reset_ := p_period;
  FOR m IN 1 .. coalesce(cardinality(r.lease_exp), 0) LOOP
    reset_ := greatest(reset_, r.lease_exp[m] - now_us);
  END LOOP;
  r.expire_at := now_us + greatest(1, (reset_ + 999) / 1000) * 1000;
  INSERT INTO {{schema}}.{{table}} AS d VALUES (r.*)
  ON CONFLICT (key) DO UPDATE SET alg = excluded.alg, expire_at = excluded.expire_at,
    x = excluded.x, ts = excluded.ts, w = excluded.w, n = excluded.n, p = excluded.p,
    log_at = excluded.log_at, log_n = excluded.log_n, lease_id = excluded.lease_id,
    lease_exp = excluded.lease_exp, tomb_id = excluded.tomb_id, tomb_exp = excluded.tomb_exp;
  RETURN false;
END
$fn$;

-- {{renew}} pushes the expiry of lease p_lease under p_key to p_period µs
-- from now and returns true, or returns false when the lease is not held
-- (an expired lease is not taken again). p_now: as in {{take}}.
CREATE OR REPLACE FUNCTION {{schema}}.{{renew}}(p_key text, p_period bigint, p_lease text, p_now bigint)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  now_us bigint;
  r {{schema}}.{{table}};
  j int;
  newest bigint;
BEGIN
  PERFORM pg_advisory_xact_lock({{lock}}, hashtext(p_key));
  now_us := coalesce(p_now, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - 1704067200000000);
  SELECT * INTO r FROM {{schema}}.{{table}} d WHERE d.key = p_key;
  IF r.key IS NOT NULL AND now_us > r.expire_at THEN
    DELETE FROM {{schema}}.{{table}} d WHERE d.key = p_key; -- absent, as a take leaves it
    RETURN false;
  END IF;
  IF r.key IS NULL OR r.alg <> 6 THEN
    RETURN false;
  END IF;
  j := array_position(r.lease_id, p_lease);
  IF j IS NULL OR r.lease_exp[j] <= now_us THEN
    RETURN false;
  END IF;
  r.lease_exp[j] := now_us + p_period;
  newest := now_us + p_period;
  FOR m IN 1 .. cardinality(r.lease_exp) LOOP
    newest := greatest(newest, r.lease_exp[m]);
  END LOOP;
  UPDATE {{schema}}.{{table}} d SET lease_exp = r.lease_exp,
    expire_at = now_us + greatest(1, (newest - now_us + 999) / 1000) * 1000
  WHERE d.key = p_key;
  RETURN true;
END
$fn$;

-- {{sweep}} deletes at most p_limit rows expired at p_now (NULL: the
-- database's clock) and returns how many. It skips rows a take has locked,
-- and finds expired rows by a sequential scan (expire_at is not indexed, so
-- that takes stay HOT updates): a sweep reads the table until it has found
-- p_limit expired rows, or to its end.
CREATE OR REPLACE FUNCTION {{schema}}.{{sweep}}(p_now bigint, p_limit int)
RETURNS bigint
LANGUAGE sql AS $fn$
  WITH now_ AS (
    SELECT coalesce(p_now, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - 1704067200000000) AS us
  ), gone AS (
    DELETE FROM {{schema}}.{{table}} d USING now_
    WHERE d.ctid = ANY (ARRAY(
      SELECT e.ctid FROM {{schema}}.{{table}} e, now_ WHERE e.expire_at < now_.us
      LIMIT p_limit FOR UPDATE OF e SKIP LOCKED))
    AND d.expire_at < now_.us
    RETURNING 1
  )
  SELECT count(*) FROM gone
$fn$;

COMMENT ON TABLE {{schema}}.{{table}} IS 'ratelimit (core/pgstore) state, schema version 2';
