-- Costs known only afterwards, the window families (007_settle.sql has the pending table, its helpers, the
-- estimates and the token bucket / GCRA settle): settle for the fixed and sliding windows and the sliding log, with
-- the same parameters and answer as sluice_bucket_settle, each applying d = actual - estimate as
-- dev.sluice.RateLimiter#settle defines it for its family.

-- Fixed and sliding window (p_sliding): the state rolled to window k of now (a clock behind the row's window
-- settles in the row's window, as a decision does); kr = the reservation's window. d > 0: the current count + d;
-- d < 0: taken off the count of window kr while kr is k (or k - 1, the previous count, for the sliding window),
-- never below zero; else nothing is given back.
create or replace function public.sluice_window_settle(
    p_sliding boolean, p_key text, p_limit_id text, p_id text, p_actual bigint, p_now_ns bigint,
    p_window_ns bigint, p_capacity bigint, p_numbers text,
    out settled boolean, out estimate bigint, out reserved_ns bigint, out adjusted bigint,
    out pre_window_no bigint, out pre_previous bigint, out pre_current bigint,
    out post_previous bigint, out post_current bigint, out now_ns bigint)
language plpgsql as $$
declare
    v_hash    bytea := sha256(convert_to(p_key, 'UTF8'));
    v_now     bigint := coalesce(p_now_ns, public.sluice_now_ns());
    v_numbers text;
    v_d       bigint;
    v_g       bigint;
    v_k       bigint;
    v_kr      bigint;
    v_tries   int := 0;
begin
    select t.estimate, t.reserved_ns into estimate, reserved_ns
      from public.sluice_pending_take(v_hash, p_limit_id, p_id, v_now) t;
    settled := estimate is not null;
    if not settled then
        return;
    end if;
    v_d := p_actual - estimate;
    loop
        select s.window_no, s.previous_count, s.current_count, s.numbers
          into pre_window_no, pre_previous, pre_current, v_numbers
          from public.sluice_window s
         where s.key_hash = v_hash and s.limit_id = p_limit_id
           for update;
        if not found then
            insert into public.sluice_window (key, limit_id, window_no, previous_count, current_count, expires_at,
                                              key_hash, numbers)
            values (p_key, p_limit_id, -9223372036854775808, 0, 0, '-infinity'::timestamptz, v_hash, p_numbers)
            on conflict do nothing;
        elsif v_numbers is distinct from p_numbers then
            perform public.sluice_window_acquire(p_sliding, p_key, p_limit_id, 0, v_now, p_window_ns, p_capacity,
                                                 p_numbers);
        else
            exit;
        end if;
        v_tries := v_tries + 1;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing under the settle', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
    v_k := floor(v_now::numeric / p_window_ns)::bigint;
    now_ns := v_now;
    if pre_window_no > v_k then
        v_k := pre_window_no;
        now_ns := v_k * p_window_ns;
    end if;
    v_kr := floor(reserved_ns::numeric / p_window_ns)::bigint;
    post_previous := case when not p_sliding then 0
                          when pre_window_no = v_k then pre_previous
                          when pre_window_no = v_k - 1 then pre_current else 0 end;
    post_current := case when pre_window_no = v_k then pre_current else 0 end;
    if v_d >= 0 then
        post_current := post_current + v_d;
        adjusted := v_d;
    elsif v_kr = v_k then
        v_g := least(-v_d, post_current);
        post_current := post_current - v_g;
        adjusted := -v_g;
    elsif p_sliding and v_kr = v_k - 1 then
        v_g := least(-v_d, post_previous);
        post_previous := post_previous - v_g;
        adjusted := -v_g;
    else
        adjusted := 0;
    end if;
    update public.sluice_window s
       set window_no = v_k, previous_count = post_previous, current_count = post_current,
           expires_at = public.sluice_ceil_second((v_k + case when p_sliding then 2 else 1 end) * p_window_ns)
     where s.key_hash = v_hash and s.limit_id = p_limit_id;
end $$;

-- Sliding log: the entries that slid out of (now - W, now] dropped (and entries of cost 0, which a cost-0 read under
-- new numbers may leave); d > 0: d logged at now (merged into an entry at now); d < 0: taken off the reservation's
-- own entry (the one at reserved_ns) while it is in the log, which goes when it reaches 0.
create or replace function public.sluice_sliding_log_settle(
    p_key text, p_limit_id text, p_id text, p_actual bigint, p_now_ns bigint, p_window_ns bigint,
    p_capacity bigint, p_numbers text,
    out settled boolean, out estimate bigint, out reserved_ns bigint, out adjusted bigint,
    out pre_at_ns bigint[], out pre_costs bigint[], out post_at_ns bigint[], out post_costs bigint[],
    out now_ns bigint)
language plpgsql as $$
declare
    v_hash    bytea := sha256(convert_to(p_key, 'UTF8'));
    v_now     bigint := coalesce(p_now_ns, public.sluice_now_ns());
    v_numbers text;
    v_d       bigint;
    v_g       bigint;
    v_n       int;
    v_m       int := 0;
    v_times   bigint[] := '{}';
    v_costs   bigint[] := '{}';
    v_tries   int := 0;
begin
    select t.estimate, t.reserved_ns into estimate, reserved_ns
      from public.sluice_pending_take(v_hash, p_limit_id, p_id, v_now) t;
    settled := estimate is not null;
    if not settled then
        return;
    end if;
    v_d := p_actual - estimate;
    loop
        select s.at_ns, s.costs, s.numbers into v_times, v_costs, v_numbers
          from public.sluice_log s
         where s.key_hash = v_hash and s.limit_id = p_limit_id
           for update;
        if not found then
            insert into public.sluice_log (key, limit_id, at_ns, costs, expires_at, key_hash, numbers)
            values (p_key, p_limit_id, '{}'::bigint[], '{}'::bigint[], '-infinity'::timestamptz, v_hash, p_numbers)
            on conflict do nothing;
        elsif v_numbers is distinct from p_numbers then
            perform public.sluice_sliding_log_acquire(p_key, p_limit_id, 0, v_now, p_window_ns, p_capacity,
                                                      p_numbers);
        else
            exit;
        end if;
        v_tries := v_tries + 1;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing under the settle', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
    pre_at_ns := '{}';
    pre_costs := '{}';
    v_n := coalesce(array_length(v_times, 1), 0);
    for i in 1 .. v_n loop
        if v_costs[i] > 0 then
            pre_at_ns := pre_at_ns || v_times[i];
            pre_costs := pre_costs || v_costs[i];
        end if;
    end loop;
    v_n := coalesce(array_length(pre_at_ns, 1), 0);
    now_ns := v_now;
    if v_n > 0 and pre_at_ns[v_n] > now_ns then
        now_ns := pre_at_ns[v_n];   -- the clock went back: never settle before the newest entry
    end if;
    post_at_ns := '{}';
    post_costs := '{}';
    for i in 1 .. v_n loop
        if pre_at_ns[i] > now_ns - p_window_ns then
            v_m := v_m + 1;
            post_at_ns[v_m] := pre_at_ns[i];
            post_costs[v_m] := pre_costs[i];
        end if;
    end loop;
    adjusted := 0;
    if v_d > 0 then
        adjusted := v_d;
        if v_m > 0 and post_at_ns[v_m] = now_ns then
            post_costs[v_m] := post_costs[v_m] + v_d;
        else
            v_m := v_m + 1;
            post_at_ns[v_m] := now_ns;
            post_costs[v_m] := v_d;
        end if;
    elsif v_d < 0 then
        for i in 1 .. v_m loop
            if post_at_ns[i] = reserved_ns then
                v_g := least(-v_d, post_costs[i]);
                adjusted := -v_g;
                if post_costs[i] = v_g then
                    post_at_ns := post_at_ns[1:i - 1] || post_at_ns[i + 1:v_m];
                    post_costs := post_costs[1:i - 1] || post_costs[i + 1:v_m];
                    v_m := v_m - 1;
                else
                    post_costs[i] := post_costs[i] - v_g;
                end if;
                exit;
            end if;
        end loop;
    end if;
    update public.sluice_log s
       set at_ns = post_at_ns, costs = post_costs,
           expires_at = case when v_m = 0 then '-infinity'::timestamptz
                             else public.sluice_ceil_second(post_at_ns[v_m] + p_window_ns) end
     where s.key_hash = v_hash and s.limit_id = p_limit_id;
end $$;
