-- The seed-compatible function, callable from psql:
--     select rate_limiting_token_bucket_request('user1', 1, 10);
--     \watch 0.1
-- A token bucket per rate_id holding window_seconds·refill_per_sec tokens at most, refilled at
-- refill_per_sec tokens a second; a first call finds it full and takes one token. Returns the tokens
-- remaining after the call (floored), or -1 when no whole token was there: then nothing is taken.
--
-- Where it differs from the original (update-else-insert, tk bigint, serializable):
--   * tk is numeric and exact: the refill of 0.1 s at 1 token/s is kept as 0.1 token, not rounded away
--     (a bigint rounds every call's refill to the nearest whole token, so calls 100 ms apart lose or gain
--     up to half a token each);
--   * a denied call writes nothing: it neither resets ts nor consumes the refill accumulated so far
--     (the original sets ts on every call and clamps tk at -1, losing that refill);
--   * one INSERT ... ON CONFLICT DO UPDATE: two first calls racing on a cold table under READ COMMITTED
--     both succeed (the original's UPDATE-then-INSERT raises a duplicate-key error for one of them);
--   * time is read once per call, and never moves ts backwards.
-- Under SERIALIZABLE (or on YugabyteDB) a conflicting call may fail with SQLSTATE 40001: retry it.
create table if not exists public.rate_limiting_token_bucket (
    id text primary key,
    tk numeric not null,        -- tokens in the bucket at ts, after the last allowed call (exact)
    ts timestamptz not null     -- when tk was measured: the last allowed call
);

create or replace function public.rate_limiting_token_bucket_request(
    rate_id text, refill_per_sec int default 2, window_seconds int default 60)
returns int
language plpgsql as $$
declare
    v_capacity numeric;
    v_now      timestamptz := clock_timestamp();
    v_left     numeric;
begin
    if rate_id is null or refill_per_sec is null or refill_per_sec < 1
       or window_seconds is null or window_seconds < 1 then
        raise exception 'rate_limiting_token_bucket_request(%, %, %): rate_id must not be null and refill_per_sec and window_seconds must be at least 1',
            quote_nullable(rate_id), coalesce(refill_per_sec::text, 'null'), coalesce(window_seconds::text, 'null')
            using errcode = '22023';
    end if;
    v_capacity := refill_per_sec::numeric * window_seconds;
    insert into public.rate_limiting_token_bucket as b (id, tk, ts)
    values (rate_id, v_capacity - 1, v_now)
    on conflict (id) do update
       set tk = least(v_capacity, b.tk + refill_per_sec * round(greatest(0,
                    public.sluice_epoch_ns(v_now) - public.sluice_epoch_ns(b.ts)) / 1000000000.0, 6)) - 1,
           ts = greatest(b.ts, v_now)
     where least(v_capacity, b.tk + refill_per_sec * round(greatest(0,
                    public.sluice_epoch_ns(v_now) - public.sluice_epoch_ns(b.ts)) / 1000000000.0, 6)) >= 1
    returning b.tk into v_left;
    if v_left is null then
        return -1;
    end if;
    return floor(v_left)::int;
end $$;
