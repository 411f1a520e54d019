-- Sliding window (counter): two epoch-aligned windows of W ns, the previous one weighted by how much of
-- it the trailing window still covers. With k = floor(t / W) and e = t - k·W:
--     estimate = prev·(W - e)/W + curr                  allowed iff estimate + q <= C
-- compared exactly in numeric as prev·(W - e) <= (C - curr - q)·W. A denied call writes nothing.
--     state (window_no, previous_count, current_count), read at k: when window_no = k it is (prev, curr);
--     when window_no = k - 1 the old current becomes prev and curr = 0; older, both are 0.
--     allowed: (k, prev, curr + q), expires_at = (k + 2)·W (both windows empty then)
--
-- Parameters: p_key, p_limit_id (Limit.id()), p_cost (q), p_now_ns (client Ticker, or null for
-- clock_timestamp() read under the row lock), p_window_ns (W), p_capacity (C).
-- Returns whether it was allowed, the state it found (dev.sluice.algorithm.SlidingWindow turns it into the
-- Decision, retryAfter included), the now it used and whether the row existed.
create or replace function public.sluice_sliding_window_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    out allowed boolean, out pre_window_no bigint, out pre_previous bigint, out pre_current bigint,
    out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash  bytea := sha256(convert_to(p_key, 'UTF8'));
    v_k     bigint;
    v_e     bigint;
    v_prev  bigint;
    v_curr  bigint;
    v_room  bigint;
    v_tries int := 0;
    v_clock   timestamp;
    v_exp_ns  bigint;
    v_expires timestamptz;
begin
    loop
        select s.window_no, s.previous_count, s.current_count into pre_window_no, pre_previous, pre_current
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
            pre_window_no := -9223372036854775808;
            pre_previous := 0;
            pre_current := 0;
        end if;
        v_k := floor(now_ns::numeric / p_window_ns)::bigint;
        if existed and pre_window_no > v_k then
            v_k := pre_window_no;
            now_ns := v_k * p_window_ns;
        end if;
        v_e := now_ns - v_k * p_window_ns;
        if pre_window_no = v_k then
            v_prev := pre_previous;
            v_curr := pre_current;
        elsif pre_window_no = v_k - 1 then
            v_prev := pre_current;
            v_curr := 0;
        else
            v_prev := 0;
            v_curr := 0;
        end if;
        v_room := p_capacity - v_curr - p_cost;
        allowed := v_room >= 0 and v_prev::numeric * (p_window_ns - v_e) <= v_room::numeric * p_window_ns;
        if not allowed then
            return;
        end if;
        v_exp_ns := (v_k + 2) * p_window_ns;
        v_expires := timestamptz 'epoch'
                   + (v_exp_ns / 1000000000 + case when v_exp_ns % 1000000000 > 0 then 1 else 0 end) * interval '1 second';
        if existed then
            update public.sluice_window
               set window_no = v_k, previous_count = v_prev, current_count = v_curr + p_cost,
                   expires_at = v_expires
             where key_hash = v_hash and limit_id = p_limit_id;
            return;
        end if;
        insert into public.sluice_window (key, limit_id, window_no, previous_count, current_count, expires_at, key_hash)
        values (p_key, p_limit_id, v_k, v_prev, v_curr + p_cost, v_expires, v_hash)
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
