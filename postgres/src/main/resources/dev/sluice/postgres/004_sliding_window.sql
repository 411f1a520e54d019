-- Sliding window (counter): two epoch-aligned windows of W ns, the previous one weighted by how much of
-- it the trailing window still covers. With k = floor(t / W) and e = t - k·W:
--     estimate = prev·(W - e)/W + curr                  allowed iff estimate + q <= C
-- compared exactly in numeric as prev·(W - e) <= (C - curr - q)·W. A denied call writes nothing.
--     state (window_no, previous_count, current_count), read at k: when window_no = k it is (prev, curr);
--     when window_no = k - 1 the old current becomes prev and curr = 0; older, both are 0
--     (a clock that went back behind window_no decides in window_no, at its start: never in an older one)
--     allowed: (k, prev, curr + q), expires_at = (k + 2)·W (both windows empty then), rounded up to the second
--
-- Decided by public.sluice_window_acquire(true, ...) in 003_fixed_window.sql, which the fixed window shares;
-- the functions below are the sliding window alone, for callers of earlier versions and for people at psql.

-- The admission test, as public.sluice_window_fits(true, ...).
create or replace function public.sluice_sliding_window_fits(
    p_window_no bigint, p_previous bigint, p_current bigint, p_k bigint, p_e bigint,
    p_cost bigint, p_window_ns bigint, p_capacity bigint)
returns boolean language sql immutable parallel safe as $$
    select public.sluice_window_fits(true, p_window_no, p_previous, p_current, p_k, p_e, p_cost, p_window_ns, p_capacity)
$$;

create or replace function public.sluice_sliding_window_acquire(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    out allowed boolean, out pre_window_no bigint, out pre_previous bigint, out pre_current bigint,
    out now_ns bigint, out existed boolean)
language sql as $$
    select w.allowed, w.pre_window_no, w.pre_previous, w.pre_current, w.now_ns, w.existed
      from public.sluice_window_acquire(true, p_key, p_limit_id, p_cost, p_now_ns, p_window_ns, p_capacity, null) w
$$;
