-- Sliding log (exact): every admission logged as (at_ns, cost). At t the log counts the entries in the
-- trailing window (t - W, t]; a call is allowed iff their costs plus q are at most C. A denied call
-- writes nothing.
--     allowed: entries at or before t - W are dropped and (t, q) appended (merged into the last entry
--              when it has the same instant); expires_at = t + W, when the newest entry has left.
--
-- Parameters: p_key, p_limit_id (Limit.id()), p_cost (q), p_now_ns (client Ticker, or null for
-- clock_timestamp() read under the row lock), p_window_ns (W), p_capacity (C, at most 10,000).
-- Returns whether it was allowed, the log it found (dev.sluice.algorithm.SlidingLog turns it into the
-- Decision, retryAfter included), the now it used and whether the row existed.
create or replace function public.sluice_sliding_log_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    out allowed boolean, out pre_at_ns bigint[], out pre_costs bigint[], out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash  bytea := sha256(convert_to(p_key, 'UTF8'));
    v_n     int;
    v_first int;
    v_sum   bigint := 0;
    v_times bigint[];
    v_costs bigint[];
    v_tries int := 0;
    v_clock   timestamp;
    v_exp_ns  bigint;
    v_expires timestamptz;
begin
    loop
        select s.at_ns, s.costs into pre_at_ns, pre_costs
          from public.sluice_log s
         where s.key_hash = v_hash and s.limit_id = p_limit_id
           for update;
        existed := found;
        if not existed then
            pre_at_ns := '{}';
            pre_costs := '{}';
        end if;
        v_n := coalesce(array_length(pre_at_ns, 1), 0);
        if p_now_ns is null then
            v_clock := clock_timestamp() at time zone 'UTC';   -- as epoch ns, exact: see 002_token_bucket.sql
            now_ns := date_part('epoch', date_trunc('second', v_clock))::bigint * 1000000000
                    + (date_part('microseconds', v_clock)::bigint % 1000000) * 1000;
        else
            now_ns := p_now_ns;
        end if;
        if v_n > 0 and pre_at_ns[v_n] > now_ns then
            now_ns := pre_at_ns[v_n];   -- the clock went back: never decide before the newest entry
        end if;
        v_first := 1;
        while v_first <= v_n and pre_at_ns[v_first] <= now_ns - p_window_ns loop
            v_first := v_first + 1;
        end loop;
        for i in v_first .. v_n loop
            v_sum := v_sum + pre_costs[i];
        end loop;
        allowed := v_sum + p_cost <= p_capacity;
        if not allowed then
            return;
        end if;
        v_exp_ns := now_ns + p_window_ns;
        v_expires := timestamptz 'epoch'
                   + (v_exp_ns / 1000000000 + case when v_exp_ns % 1000000000 > 0 then 1 else 0 end) * interval '1 second';
        v_times := coalesce(pre_at_ns[v_first:v_n], '{}');
        v_costs := coalesce(pre_costs[v_first:v_n], '{}');
        if v_first <= v_n and pre_at_ns[v_n] = now_ns then
            v_costs[v_n - v_first + 1] := v_costs[v_n - v_first + 1] + p_cost;
        else
            v_times := v_times || now_ns;
            v_costs := v_costs || p_cost;
        end if;
        if existed then
            update public.sluice_log
               set at_ns = v_times, costs = v_costs,
                   expires_at = v_expires
             where key_hash = v_hash and limit_id = p_limit_id;
            return;
        end if;
        insert into public.sluice_log (key, limit_id, at_ns, costs, expires_at, key_hash)
        values (p_key, p_limit_id, v_times, v_costs, v_expires, v_hash)
        on conflict do nothing;
        if found then
            return;
        end if;
        v_tries := v_tries + 1;
        v_sum := 0;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing between lock and insert', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
end $$;
