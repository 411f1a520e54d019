-- Sliding log (exact): every admission logged as (at_ns, cost). At t the log counts the entries in the
-- trailing window (t - W, t]; a call is allowed iff their costs plus q are at most C. A denied call
-- writes nothing.
--     allowed: entries at or before t - W are dropped and (t, q) appended (merged into the last entry
--              when it has the same instant); expires_at = t + W, when the newest entry has left.
--
-- Parameters: p_key, p_limit_id (Limit.identity()), p_cost (q), p_now_ns (client Ticker, or null for
-- clock_timestamp() read under the row lock), p_window_ns (W), p_capacity (C, at most 10,000), p_numbers (null
-- for an unnamed limit, else Limit.id(): a log written under other numbers of the same name is first read under
-- these, as dev.sluice.algorithm.Inheritance.slidingLog does: the entries inside the old window keep their times,
-- those a shorter window would have dropped already move to its first microsecond; kept so even if denied).
-- Returns whether it was allowed, the log it found (dev.sluice.algorithm.SlidingLog turns it into the
-- Decision, retryAfter included), the now it used and whether the row existed.
create or replace function public.sluice_sliding_log_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    p_numbers text, out allowed boolean, out pre_at_ns bigint[], out pre_costs bigint[], out now_ns bigint, out existed boolean)
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
    v_numbers text;
    v_edge    bigint;
    v_early   bigint;
    v_t       bigint;
    v_m       int;
begin
    loop
        select s.at_ns, s.costs, s.numbers into pre_at_ns, pre_costs, v_numbers
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
        if existed and v_numbers is distinct from p_numbers then
            -- written under other numbers of the same name (Limit.id() 'sl:capacity:windowNanos')
            v_edge := now_ns - split_part(v_numbers, ':', 3)::bigint;
            v_early := now_ns - p_window_ns + 1000;
            v_times := '{}';
            v_costs := '{}';
            v_m := 0;
            for i in 1 .. v_n loop
                if pre_at_ns[i] > v_edge then
                    v_t := greatest(pre_at_ns[i], v_early);
                    if v_m > 0 and v_times[v_m] = v_t then
                        v_costs[v_m] := v_costs[v_m] + pre_costs[i];
                    else
                        v_m := v_m + 1;
                        v_times[v_m] := v_t;
                        v_costs[v_m] := pre_costs[i];
                    end if;
                end if;
            end loop;
            pre_at_ns := v_times;
            pre_costs := v_costs;
            v_n := v_m;
            update public.sluice_log
               set at_ns = v_times, costs = v_costs, numbers = p_numbers,
                   expires_at = case when v_m = 0 then '-infinity'::timestamptz
                                     else public.sluice_ceil_second(v_times[v_m] + p_window_ns) end
             where key_hash = v_hash and limit_id = p_limit_id;
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
               set at_ns = v_times, costs = v_costs, numbers = p_numbers,
                   expires_at = v_expires
             where key_hash = v_hash and limit_id = p_limit_id;
            return;
        end if;
        insert into public.sluice_log (key, limit_id, at_ns, costs, expires_at, key_hash, numbers)
        values (p_key, p_limit_id, v_times, v_costs, v_expires, v_hash, p_numbers)
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
