-- Token bucket and GCRA: one decision, one call.
--
-- The bucket is full again at TAT (the theoretical arrival time). With emission interval T = period/permits,
-- capacity (burst) C, cost q and now t:
--     allowed iff max(TAT, t) + q·T - t <= C·T          then TAT' = max(TAT, t) + q·T
-- A denied call writes nothing: it consumes nothing.
-- Computed exactly on the backlog B = max(0, TAT - t) in units of 1/time_scale ns, where T and C·T are the
-- integers P = p_interval_scaled and CP = p_capacity_scaled (dev.sluice.Limit says how they are derived):
--     t       = max(now, at_ns)                          (a clock that went back never decides earlier)
--     B(t)    = backlog - (t - at_ns)·time_scale, at least 0
--     excess  = max(0, B(t) + q·P - CP)                 allowed iff excess <= max_wait (0 for tryAcquire)
--     B'      = B(t) + q·P, measured at t;  expires_at = t + ceil(B' / time_scale) ns, rounded up to the second
--
-- Parameters:
--   p_key, p_limit_id    the key and Limit.identity()
--   p_numbers            null for an unnamed limit, else Limit.id(): a row written under other numbers of the same
--                        name is first read under these (dev.sluice.algorithm.Inheritance.tat: the backlog B at now,
--                        in permits, carries over, ⌈B·P'/P⌉ in the new units) and then decided on
--   p_cost               q, 1 <= q <= C (checked by the caller)
--   p_now_ns             epoch ns from the client's Ticker, or null for clock_timestamp()
--   p_time_scale, p_interval_scaled, p_capacity_scaled    Limit.timeScale(), intervalScaled(), capacityScaled()
--   p_max_wait_scaled    null for tryAcquire; for reserve, the wait allowed, in 1/time_scale ns
-- Returns whether it was allowed, a state equivalent to the one it decided on (the pure step
-- dev.sluice.algorithm.Gcra turns it into the Decision's exact fields), the now it used, and whether the
-- row existed.
--
-- How: an allowed call on an existing row is one UPDATE whose WHERE is the admission test, evaluated on
-- the row as locked (under READ COMMITTED a concurrent update makes it wait and re-check the newest
-- version), so the common case is a single row write. No row updated means denied, or no row: a plain
-- SELECT (no lock, no write) reads the newest state; denied on it, the call returns. A first call
-- inserts (ON CONFLICT DO NOTHING); a racing first call that lost the INSERT loops and updates the
-- winner's row: no duplicate-key error under READ COMMITTED.
-- B(t) in SQL: the backlog measured at p_at_ns, drained until p_now_ns (never below 0, never refilled by a
-- clock that went back). Inlined by the planner wherever it is used.
create or replace function public.sluice_backlog_at(p_backlog bigint, p_at_ns bigint, p_now_ns bigint,
                                                    p_time_scale bigint)
returns bigint language sql immutable parallel safe as $$
    select case when p_now_ns - p_at_ns > p_backlog / p_time_scale then 0
                when p_now_ns <= p_at_ns then p_backlog
                else p_backlog - (p_now_ns - p_at_ns) * p_time_scale end
$$;

-- When a bucket with backlog p_backlog at p_at_ns is full again, rounded up to the second (never early).
create or replace function public.sluice_full_at(p_at_ns bigint, p_backlog bigint, p_time_scale bigint)
returns timestamptz language sql immutable parallel safe as $$
    select to_timestamp(((p_at_ns + p_backlog / p_time_scale + case when p_backlog % p_time_scale > 0 then 1 else 0 end)
                         + 999999999) / 1000000000)
$$;

create or replace function public.sluice_bucket_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint,
    p_time_scale bigint, p_interval_scaled bigint, p_capacity_scaled bigint, p_max_wait_scaled bigint,
    p_numbers text,
    out allowed boolean, out pre_backlog bigint, out pre_at_ns bigint, out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash   bytea := sha256(convert_to(p_key, 'UTF8'));
    v_q      bigint := p_cost * p_interval_scaled;                               -- q·P <= CP <= 2^62
    v_room   bigint := p_capacity_scaled - v_q + coalesce(p_max_wait_scaled, 0); -- allowed iff B(t) <= room
    v_clock  timestamp;
    v_now    bigint;
    v_after  bigint;
    v_tries  int := 0;
    v_numbers text;
    v_t      bigint;
    v_old    bigint;
begin
    if p_now_ns is null then
        -- clock_timestamp() as epoch ns, exact (microseconds) on PostgreSQL 12+: whole seconds and the
        -- microseconds field as doubles that hold them exactly (inline: a helper call would cost more
        -- than the decision's arithmetic)
        v_clock := clock_timestamp() at time zone 'UTC';
        v_now := date_part('epoch', date_trunc('second', v_clock))::bigint * 1000000000
               + (date_part('microseconds', v_clock)::bigint % 1000000) * 1000;
    else
        v_now := p_now_ns;
    end if;
    loop
        -- allowed on an existing row: this one UPDATE is the whole decision
        update public.sluice_bucket s
           set backlog = public.sluice_backlog_at(s.backlog, s.at_ns, v_now, p_time_scale) + v_q,
               at_ns = greatest(v_now, s.at_ns),
               expires_at = public.sluice_full_at(greatest(v_now, s.at_ns),
                       public.sluice_backlog_at(s.backlog, s.at_ns, v_now, p_time_scale) + v_q, p_time_scale)
         where s.key_hash = v_hash and s.limit_id = p_limit_id and s.numbers is not distinct from p_numbers
           and public.sluice_backlog_at(s.backlog, s.at_ns, v_now, p_time_scale) <= v_room
        returning s.backlog, s.at_ns into v_after, now_ns;
        if found then
            allowed := true;
            existed := true;
            pre_backlog := v_after - v_q;   -- the state it decided on, measured at now_ns
            pre_at_ns := now_ns;
            return;
        end if;
        -- denied, or no row: read the newest state without locking or writing
        select s.backlog, s.at_ns, s.numbers into pre_backlog, pre_at_ns, v_numbers
          from public.sluice_bucket s
         where s.key_hash = v_hash and s.limit_id = p_limit_id;
        if found and v_numbers is distinct from p_numbers then
            -- written under other numbers of the same name (Limit.id() 'tb:capacity:timeScale:intervalScaled'):
            -- the backlog at now, read under these numbers, replaces it if the row is still what was read;
            -- then decide again on it
            v_t := greatest(v_now, pre_at_ns);
            v_old := public.sluice_backlog_at(pre_backlog, pre_at_ns, v_t, split_part(v_numbers, ':', 3)::bigint);
            if v_old > 0 then
                v_old := least(div(v_old::numeric * p_interval_scaled + split_part(v_numbers, ':', 4)::bigint - 1,
                                   split_part(v_numbers, ':', 4)::bigint), 4611686018427387904)::bigint;
            end if;
            update public.sluice_bucket s
               set backlog = v_old, at_ns = v_t, numbers = p_numbers,
                   expires_at = public.sluice_full_at(v_t, v_old, p_time_scale)
             where s.key_hash = v_hash and s.limit_id = p_limit_id and s.numbers is not distinct from v_numbers
               and s.backlog = pre_backlog and s.at_ns = pre_at_ns;
        elsif found then
            now_ns := greatest(v_now, pre_at_ns);
            if public.sluice_backlog_at(pre_backlog, pre_at_ns, now_ns, p_time_scale) > v_room then
                allowed := false;
                existed := true;
                return;
            end if;
            -- reset and re-created since the UPDATE looked: decide again
        else
            if p_now_ns is null then
                -- no row: never there, reset, or deleted (by the expiry cleaner, say) while this call waited
                -- for its lock. Read the clock again, after the SELECT that found it gone, so the fresh
                -- bucket does not start before that delete: its first read may predate it, and a bucket
                -- that started then would refill from an instant the deleted row still covered
                v_now := greatest(v_now, public.sluice_now_ns());
            end if;
            insert into public.sluice_bucket (key, limit_id, backlog, at_ns, expires_at, key_hash, numbers)
            values (p_key, p_limit_id, v_q, v_now, public.sluice_full_at(v_now, v_q, p_time_scale), v_hash, p_numbers)
            on conflict do nothing;
            if found then
                allowed := true;     -- a fresh key (a full bucket) admits any cost up to its capacity
                existed := false;
                pre_backlog := 0;
                pre_at_ns := 0;
                now_ns := v_now;
                return;
            end if;
            -- another first call inserted the row meanwhile: decide again on it
        end if;
        v_tries := v_tries + 1;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing under the decision', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
end $$;

-- Many token-bucket / GCRA decisions in one call, for callers that batch concurrent decisions (one round
-- trip and one commit for all of them). Element i is decided exactly as sluice_bucket_acquire would decide
-- it alone; elements naming the same key and limit are decided one after another in array order. Rows are
-- visited in one fixed order (key digest, then limit id, then array position), the order every multi-row
-- locker in Sluice uses, so concurrent batches cannot deadlock. All elements commit or none do.
-- Parameters are arrays of sluice_bucket_acquire's parameters (p_now_ns elements may be null: the clock);
-- returns one row per element with its 1-based position.
create or replace function public.sluice_bucket_acquire_many(
    p_keys text[], p_limit_ids text[], p_costs bigint[], p_now_ns bigint[],
    p_time_scales bigint[], p_intervals_scaled bigint[], p_capacities_scaled bigint[], p_max_waits_scaled bigint[],
    p_numbers text[])
returns table (ord int, allowed boolean, pre_backlog bigint, pre_at_ns bigint, now_ns bigint, existed boolean)
language plpgsql as $$
declare
    r record;
begin
    for r in
        select u.i from unnest(p_keys, p_limit_ids) with ordinality as u(k, l, i)
         order by sha256(convert_to(u.k, 'UTF8')), u.l, u.i
    loop
        ord := r.i;
        select a.allowed, a.pre_backlog, a.pre_at_ns, a.now_ns, a.existed
          into allowed, pre_backlog, pre_at_ns, now_ns, existed
          from public.sluice_bucket_acquire(p_keys[r.i], p_limit_ids[r.i], p_costs[r.i], p_now_ns[r.i],
                  p_time_scales[r.i], p_intervals_scaled[r.i], p_capacities_scaled[r.i], p_max_waits_scaled[r.i],
                  p_numbers[r.i]) a;
        return next;
    end loop;
end $$;
