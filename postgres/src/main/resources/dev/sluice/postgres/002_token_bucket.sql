-- Token bucket and GCRA: one decision, one call.
--
-- The bucket is full again at TAT (the theoretical arrival time). With emission interval T = period/permits,
-- capacity (burst) C, cost q and now t:
--     allowed iff max(TAT, t) + q·T - t <= C·T          then TAT' = max(TAT, t) + q·T
-- A denied call writes nothing: it consumes nothing.
-- Computed exactly on the backlog B = max(0, TAT - t) in units of 1/time_scale ns, where T and C·T are the
-- integers P = p_interval_scaled and CP = p_capacity_scaled (dev.sluice.Limit says how they are derived):
--     B(t)    = max(0, backlog - (t - at_ns)·time_scale)
--     excess  = max(0, B(t) + q·P - CP)                 allowed iff excess <= max_wait (0 for tryAcquire)
--     B'      = B(t) + q·P,  measured at t;  expires_at = t + ceil(B' / time_scale) ns
--
-- Parameters:
--   p_key, p_limit_id    the key and Limit.id()
--   p_cost               q, 1 <= q <= C (checked by the caller)
--   p_now_ns             epoch ns from the client's Ticker, or null for clock_timestamp() (read after the
--                        row lock is held, so that time never runs backwards across lock holders)
--   p_time_scale, p_interval_scaled, p_capacity_scaled    Limit.timeScale(), intervalScaled(), capacityScaled()
--   p_max_wait_scaled    null for tryAcquire; for reserve, the wait allowed, in 1/time_scale ns
-- Returns whether it was allowed, the state it found (the pure step dev.sluice.algorithm.Gcra turns it
-- into the Decision's exact fields), the now it used, and whether the row existed.
-- The read is SELECT ... FOR UPDATE, so a concurrent first call for the same key waits or, having lost
-- the INSERT race, loops once to lock the winner's row: no duplicate-key error under READ COMMITTED.
create or replace function public.sluice_bucket_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint,
    p_time_scale bigint, p_interval_scaled bigint, p_capacity_scaled bigint, p_max_wait_scaled bigint,
    out allowed boolean, out pre_backlog bigint, out pre_at_ns bigint, out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash    bytea := sha256(convert_to(p_key, 'UTF8'));
    v_b       bigint;
    v_elapsed bigint;
    v_after   bigint;
    v_tries   int := 0;
begin
    loop
        select s.backlog, s.at_ns into pre_backlog, pre_at_ns
          from public.sluice_bucket s
         where s.key_hash = v_hash and s.limit_id = p_limit_id
           for update;
        existed := found;
        if not existed then
            pre_backlog := 0;   -- a fresh key: a full bucket
            pre_at_ns := 0;
        end if;
        now_ns := greatest(coalesce(p_now_ns, public.sluice_now_ns()), pre_at_ns);
        v_elapsed := now_ns - pre_at_ns;
        if v_elapsed <= 0 or pre_backlog = 0 then
            v_b := pre_backlog;
        elsif v_elapsed > pre_backlog / p_time_scale then
            v_b := 0;
        else
            v_b := pre_backlog - v_elapsed * p_time_scale;
        end if;
        allowed := greatest(v_b + p_cost * p_interval_scaled - p_capacity_scaled, 0) <= coalesce(p_max_wait_scaled, 0);
        if not allowed then
            return;
        end if;
        v_after := v_b + p_cost * p_interval_scaled;
        if existed then
            update public.sluice_bucket
               set backlog = v_after, at_ns = now_ns,
                   expires_at = public.sluice_timestamp(now_ns + v_after / p_time_scale
                                                        + case when v_after % p_time_scale > 0 then 1 else 0 end)
             where key_hash = v_hash and limit_id = p_limit_id;
            return;
        end if;
        insert into public.sluice_bucket (key, limit_id, backlog, at_ns, expires_at, key_hash)
        values (p_key, p_limit_id, v_after, now_ns,
                public.sluice_timestamp(now_ns + v_after / p_time_scale
                                        + case when v_after % p_time_scale > 0 then 1 else 0 end), v_hash)
        on conflict do nothing;
        if found then
            return;
        end if;
        -- another first call inserted the row meanwhile: lock it and decide again
        v_tries := v_tries + 1;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing between lock and insert', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
end $$;
