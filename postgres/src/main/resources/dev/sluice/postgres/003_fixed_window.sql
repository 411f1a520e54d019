-- The window counters, fixed and sliding (004_sliding_window.sql), decided by one function: time is cut
-- into windows of W ns aligned to the Unix epoch; window k = floor(t / W), e = t - k·W.
--   Fixed window: admits while count_k + q <= C.
--     state (window_no, current_count): count_k = current_count when window_no = k, else 0
--     allowed: window_no = k, current_count = count_k + q, expires_at = (k + 1)·W, rounded up to the second
--   Sliding window: see 004_sliding_window.sql; expires_at = (k + 2)·W (both windows empty then).
--   Either way a clock that went back behind window_no decides in window_no, at its start: never in an
--   older one; and a denied call writes nothing.
--
-- Parameters: p_sliding (which of the two), p_key, p_limit_id (Limit.identity()), p_cost (q), p_now_ns (client
-- Ticker, or null for clock_timestamp()), p_window_ns (W), p_capacity (C), p_numbers (null for an unnamed limit,
-- else Limit.id(): a row written under other numbers of the same name is first read under these, as
-- dev.sluice.algorithm.Inheritance does: a fixed window's count of the window holding now carries into the new
-- window holding now; a sliding window with the same W keeps both counts, with another W its estimate at now,
-- rounded up, becomes the current count of the new window holding now).
-- Returns whether it was allowed, a state equivalent to the one it decided on (dev.sluice.algorithm.FixedWindow
-- or SlidingWindow turns it into the Decision), the now it used and whether the row existed.
-- How: as sluice_bucket_acquire (002_token_bucket.sql): allowed is one UPDATE whose WHERE is the test,
-- denied is a plain SELECT, a first call an INSERT ... ON CONFLICT DO NOTHING.

-- The admission test of either counter, inlined into the UPDATE's WHERE: window_no/previous/current as stored,
-- k and e of now. The sliding one compares exactly in numeric: prev·(W - e) <= (C - curr - q)·W.
create or replace function public.sluice_window_fits(
    p_sliding boolean, p_window_no bigint, p_previous bigint, p_current bigint, p_k bigint, p_e bigint,
    p_cost bigint, p_window_ns bigint, p_capacity bigint)
returns boolean language sql immutable parallel safe as $$
    select p_capacity - (case when p_window_no >= p_k then p_current else 0 end) - p_cost >= 0
       and (not p_sliding
            or (case when p_window_no >= p_k then p_previous when p_window_no = p_k - 1 then p_current else 0 end)::numeric
               * (p_window_ns - (case when p_window_no > p_k then 0 else p_e end))
               <= (p_capacity - (case when p_window_no >= p_k then p_current else 0 end) - p_cost)::numeric * p_window_ns)
$$;

create or replace function public.sluice_window_acquire(
    p_sliding boolean, p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint,
    p_capacity bigint, p_numbers text, out allowed boolean, out pre_window_no bigint, out pre_previous bigint,
    out pre_current bigint, out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash  bytea := sha256(convert_to(p_key, 'UTF8'));
    v_clock timestamp;
    v_now   bigint;
    v_k     bigint;
    v_e     bigint;
    v_kk    bigint;
    v_after bigint;
    v_span  int := case when p_sliding then 2 else 1 end;   -- windows until a row is fresh again
    v_tries int := 0;
    v_numbers text;
    v_w     bigint;   -- the window the row was written under
    v_ok    bigint;   -- its window number at now
    v_est   bigint;
begin
    if p_now_ns is null then
        v_clock := clock_timestamp() at time zone 'UTC';   -- as epoch ns, exact: see 002_token_bucket.sql
        v_now := date_part('epoch', date_trunc('second', v_clock))::bigint * 1000000000
               + (date_part('microseconds', v_clock)::bigint % 1000000) * 1000;
    else
        v_now := p_now_ns;
    end if;
    v_k := floor(v_now::numeric / p_window_ns)::bigint;
    v_e := v_now - v_k * p_window_ns;
    loop
        update public.sluice_window s
           set window_no = greatest(v_k, s.window_no),
               previous_count = case when not p_sliding then 0
                                     when s.window_no >= v_k then s.previous_count
                                     when s.window_no = v_k - 1 then s.current_count else 0 end,
               current_count = (case when s.window_no >= v_k then s.current_count else 0 end) + p_cost,
               expires_at = public.sluice_ceil_second((greatest(v_k, s.window_no) + v_span) * p_window_ns)
         where s.key_hash = v_hash and s.limit_id = p_limit_id and s.numbers is not distinct from p_numbers
           and public.sluice_window_fits(p_sliding, s.window_no, s.previous_count, s.current_count, v_k, v_e,
                                         p_cost, p_window_ns, p_capacity)
        returning s.window_no, s.previous_count, s.current_count into v_kk, pre_previous, v_after;
        if found then
            allowed := true;
            existed := true;
            pre_window_no := v_kk;
            pre_current := v_after - p_cost;
            now_ns := case when v_kk > v_k then v_kk * p_window_ns else v_now end;
            return;
        end if;
        select s.window_no, s.previous_count, s.current_count, s.numbers
          into pre_window_no, pre_previous, pre_current, v_numbers
          from public.sluice_window s
         where s.key_hash = v_hash and s.limit_id = p_limit_id;
        if found and v_numbers is distinct from p_numbers then
            -- written under other numbers of the same name (Limit.id() 'fw:capacity:windowNanos' or 'sw:...'):
            -- replaced by its state read under these if the row is still what was read; then decide again
            v_w := split_part(v_numbers, ':', 3)::bigint;
            v_ok := floor(v_now::numeric / v_w)::bigint;
            if not p_sliding then
                v_est := case when pre_window_no = v_ok then pre_current else 0 end;
                v_w := 0;   -- (any window: a fixed window's count carried over is in the new window)
                v_kk := v_k;
                v_after := 0;
            elsif v_w = p_window_ns then
                v_est := pre_current;
                v_kk := pre_window_no;
                v_after := pre_previous;
            else
                v_est := (case when pre_window_no = v_ok then pre_current else 0 end)
                       + div((case when pre_window_no = v_ok then pre_previous
                                   when pre_window_no = v_ok - 1 then pre_current else 0 end)::numeric
                             * (v_w - (v_now - v_ok * v_w)) + v_w - 1, v_w)::bigint;
                v_kk := v_k;
                v_after := 0;
            end if;
            if v_est = 0 and v_w <> p_window_ns then
                v_kk := -9223372036854775808;   -- nothing carried over: fresh
            end if;
            update public.sluice_window s
               set window_no = v_kk, previous_count = v_after, current_count = v_est, numbers = p_numbers,
                   expires_at = case when v_kk = -9223372036854775808 then '-infinity'::timestamptz
                                     else public.sluice_ceil_second((v_kk + v_span) * p_window_ns) end
             where s.key_hash = v_hash and s.limit_id = p_limit_id and s.numbers is not distinct from v_numbers
               and s.window_no = pre_window_no and s.previous_count = pre_previous
               and s.current_count = pre_current;
        elsif found then
            now_ns := case when pre_window_no > v_k then pre_window_no * p_window_ns else v_now end;
            if not public.sluice_window_fits(p_sliding, pre_window_no, pre_previous, pre_current, v_k, v_e,
                                             p_cost, p_window_ns, p_capacity) then
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
                v_e := v_now - v_k * p_window_ns;
            end if;
            insert into public.sluice_window (key, limit_id, window_no, previous_count, current_count, expires_at, key_hash,
                                              numbers)
            values (p_key, p_limit_id, v_k, 0, p_cost, public.sluice_ceil_second((v_k + v_span) * p_window_ns), v_hash,
                    p_numbers)
            on conflict do nothing;
            if found then
                allowed := true;
                existed := false;
                pre_window_no := -9223372036854775808;   -- a fresh key: no window counted yet
                pre_previous := 0;
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

-- The fixed window alone, for callers of earlier versions and for people at psql.
create or replace function public.sluice_fixed_window_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    out allowed boolean, out pre_window_no bigint, out pre_current bigint, out now_ns bigint, out existed boolean)
language sql as $$
    select w.allowed, w.pre_window_no, w.pre_current, w.now_ns, w.existed
      from public.sluice_window_acquire(false, p_key, p_limit_id, p_cost, p_now_ns, p_window_ns, p_capacity, null) w
$$;
