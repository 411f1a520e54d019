-- Fixed window: time cut into windows of W ns aligned to the Unix epoch; window k = floor(t / W)
-- admits while count_k + q <= C. A denied call writes nothing.
--     state (window_no, current_count): count_k = current_count when window_no = k, else 0
--     (a clock that went back behind window_no decides in window_no, at its start: never in an older one)
--     allowed: window_no = k, current_count = count_k + q, expires_at = (k + 1)·W, rounded up to the second
--
-- Parameters: p_key, p_limit_id (Limit.id()), p_cost (q), p_now_ns (client Ticker, or null for
-- clock_timestamp()), p_window_ns (W), p_capacity (C).
-- Returns whether it was allowed, a state equivalent to the one it decided on
-- (dev.sluice.algorithm.FixedWindow turns it into the Decision), the now it used and whether the row existed.
-- How: as sluice_bucket_acquire (002_token_bucket.sql): allowed is one UPDATE whose WHERE is the test,
-- denied is a plain SELECT, a first call an INSERT ... ON CONFLICT DO NOTHING.
create or replace function public.sluice_fixed_window_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    out allowed boolean, out pre_window_no bigint, out pre_current bigint, out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash  bytea := sha256(convert_to(p_key, 'UTF8'));
    v_clock timestamp;
    v_now   bigint;
    v_k     bigint;
    v_kk    bigint;
    v_after bigint;
    v_tries int := 0;
begin
    if p_now_ns is null then
        v_clock := clock_timestamp() at time zone 'UTC';   -- as epoch ns, exact: see 002_token_bucket.sql
        v_now := date_part('epoch', date_trunc('second', v_clock))::bigint * 1000000000
               + (date_part('microseconds', v_clock)::bigint % 1000000) * 1000;
    else
        v_now := p_now_ns;
    end if;
    v_k := floor(v_now::numeric / p_window_ns)::bigint;
    loop
        update public.sluice_window s
           set window_no = greatest(v_k, s.window_no),
               previous_count = 0,
               current_count = (case when s.window_no >= v_k then s.current_count else 0 end) + p_cost,
               expires_at = public.sluice_ceil_second((greatest(v_k, s.window_no) + 1) * p_window_ns)
         where s.key_hash = v_hash and s.limit_id = p_limit_id
           and (case when s.window_no >= v_k then s.current_count else 0 end) + p_cost <= p_capacity
        returning s.window_no, s.current_count into v_kk, v_after;
        if found then
            allowed := true;
            existed := true;
            pre_window_no := v_kk;
            pre_current := v_after - p_cost;
            now_ns := case when v_kk > v_k then v_kk * p_window_ns else v_now end;
            return;
        end if;
        select s.window_no, s.current_count into pre_window_no, pre_current
          from public.sluice_window s
         where s.key_hash = v_hash and s.limit_id = p_limit_id;
        if found then
            now_ns := case when pre_window_no > v_k then pre_window_no * p_window_ns else v_now end;
            if (case when pre_window_no >= v_k then pre_current else 0 end) + p_cost > p_capacity then
                allowed := false;
                existed := true;
                return;
            end if;
            -- reset and re-created since the UPDATE looked: decide again
        else
            if p_now_ns is null then
                -- no row: never there, reset, or deleted (by the expiry cleaner, say) while this call waited
                -- for its lock. Read the clock again, after the SELECT that found it gone, so the fresh row
                -- does not count in a window the deleted row had already closed (see 002_token_bucket.sql)
                v_now := greatest(v_now, public.sluice_now_ns());
                v_k := floor(v_now::numeric / p_window_ns)::bigint;
            end if;
            insert into public.sluice_window (key, limit_id, window_no, previous_count, current_count, expires_at, key_hash)
            values (p_key, p_limit_id, v_k, 0, p_cost, public.sluice_ceil_second((v_k + 1) * p_window_ns), v_hash)
            on conflict do nothing;
            if found then
                allowed := true;
                existed := false;
                pre_window_no := -9223372036854775808;   -- a fresh key: no window counted yet
                pre_current := 0;
                now_ns := v_now;
                return;
            end if;
        end if;
        v_tries := v_tries + 1;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing under the decision', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
end $$;
