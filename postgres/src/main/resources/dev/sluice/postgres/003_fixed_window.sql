-- Fixed window: time cut into windows of W ns aligned to the Unix epoch; window k = floor(t / W)
-- admits while count_k + q <= C. A denied call writes nothing.
--     state (window_no, current_count): count_k = current_count when window_no = k, else 0
--     allowed: window_no = k, current_count = count_k + q, expires_at = (k + 1)·W
--
-- Parameters: p_key, p_limit_id (Limit.id()), p_cost (q), p_now_ns (client Ticker, or null for
-- clock_timestamp() read under the row lock), p_window_ns (W), p_capacity (C).
-- Returns whether it was allowed, the state it found (dev.sluice.algorithm.FixedWindow turns it into the
-- Decision), the now it used and whether the row existed.
create or replace function public.sluice_fixed_window_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    out allowed boolean, out pre_window_no bigint, out pre_current bigint, out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash  bytea := sha256(convert_to(p_key, 'UTF8'));
    v_k     bigint;
    v_count bigint;
    v_tries int := 0;
    v_clock   timestamp;
    v_exp_ns  bigint;
    v_expires timestamptz;
begin
    loop
        select s.window_no, s.current_count into pre_window_no, pre_current
          from public.sluice_window s
         where s.key_hash = v_hash and s.limit_id = p_limit_id
           for update;
        existed := found;
        if p_now_ns is null then
            v_clock := clock_timestamp() at time zone 'UTC';   -- as epoch ns, exact: see 002_token_bucket.sql
            now_ns := date_part('epoch', date_trunc('second', v_clock))::bigint * 1000000000
                    + (date_part('microseconds', v_clock)::bigint % 1000000) * 1000;
        else
            now_ns := p_now_ns;
        end if;
        if not existed then
            pre_window_no := -9223372036854775808;   -- a fresh key: no window counted yet
            pre_current := 0;
        end if;
        v_k := floor(now_ns::numeric / p_window_ns)::bigint;
        if existed and pre_window_no > v_k then
            -- the clock went back behind the stored window: decide in that window, never in an older one
            v_k := pre_window_no;
            now_ns := v_k * p_window_ns;
        end if;
        v_count := case when pre_window_no = v_k then pre_current else 0 end;
        allowed := v_count + p_cost <= p_capacity;
        if not allowed then
            return;
        end if;
        v_exp_ns := (v_k + 1) * p_window_ns;
        v_expires := timestamptz 'epoch'
                   + (v_exp_ns / 1000000000 + case when v_exp_ns % 1000000000 > 0 then 1 else 0 end) * interval '1 second';
        if existed then
            update public.sluice_window
               set window_no = v_k, previous_count = 0, current_count = v_count + p_cost,
                   expires_at = v_expires
             where key_hash = v_hash and limit_id = p_limit_id;
            return;
        end if;
        insert into public.sluice_window (key, limit_id, window_no, previous_count, current_count, expires_at, key_hash)
        values (p_key, p_limit_id, v_k, 0, v_count + p_cost, v_expires, v_hash)
        on conflict do nothing;
        if found then
            return;
        end if;
        v_tries := v_tries + 1;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing between lock and insert', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
end $$;
