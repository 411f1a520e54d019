-- Work in flight (dev.sluice.InFlightLimiter): slots with a lease, at most a maximum held per key at once.
--
-- One row per slot held: (key, holder, expires_ns), and one head row per key (holder = '', which no holder id is:
-- ids are 1 to 128 visible ASCII characters) that every step locks first, so the steps on one key are serial under
-- any isolation level: under READ COMMITTED each statement after the lock sees the rows the step before it
-- committed; under REPEATABLE READ or SERIALIZABLE a step that waited for the lock fails with 40001 and the limiter
-- retries it (RetryPolicy). The head row's expires_at is the key's latest lease end, so the expiry cleaner deletes a
-- key whose holders all died, head and all. The step, at now (the client's ticker, or clock_timestamp()):
--     1. holders whose lease ended (expires_ns <= now) are deleted;
--     2. acquire: a holder that holds gets expires_ns = now + lease and is allowed (nothing more is taken); else,
--        when fewer than max are held, it is inserted with now + lease and allowed; else denied, nothing changes;
--        release: deletes the holder, true iff it held; renew: true iff it held, its expires_ns = now + lease;
--     3. no slot left: the head row goes too; else its expires_at follows the latest lease.
-- dev.sluice.algorithm.InFlightSlots is the same step; the Decision is built from what this returns.
create table if not exists public.sluice_in_flight (
    key         text        not null,
    holder      text        not null,   -- the holder's id; '' for the key's head row
    expires_ns  bigint      not null,   -- epoch nanoseconds the lease ends (the head row: the latest lease's)
    expires_at  timestamptz not null,   -- expires_ns rounded up to the second: the expiry cleaner's
    key_hash    bytea       not null,
    primary key (key_hash, holder)
);
create index if not exists sluice_in_flight_expires_at on public.sluice_in_flight (expires_at asc);

-- Parameters: p_op ('a' acquire, 'r' release, 'n' renew), p_key, p_holder, p_max (acquire), p_lease_ns (acquire,
-- renew), p_now_ns (epoch ns from the client's Ticker, or null for clock_timestamp()).
-- Returns ok (allowed, released, renewed), the slots held after, the earliest and latest lease end among them
-- (null when none is held) and the now it used.
create or replace function public.sluice_in_flight_step(
    p_op text, p_key text, p_holder text, p_max bigint, p_lease_ns bigint, p_now_ns bigint,
    out ok boolean, out held bigint, out earliest_ns bigint, out latest_ns bigint, out now_ns bigint)
language plpgsql as $$
declare
    v_hash  bytea := sha256(convert_to(p_key, 'UTF8'));
begin
    -- the head row, created or locked: the no-op DO UPDATE is what locks an existing one
    insert into public.sluice_in_flight as s (key, holder, expires_ns, expires_at, key_hash)
    values (p_key, '', 0, '-infinity'::timestamptz, v_hash)
    on conflict (key_hash, holder) do update set key = excluded.key;
    now_ns := coalesce(p_now_ns, public.sluice_now_ns());   -- read once the key is locked
    delete from public.sluice_in_flight
     where key_hash = v_hash and holder <> '' and expires_ns <= now_ns;
    if p_op = 'r' then
        delete from public.sluice_in_flight where key_hash = v_hash and holder = p_holder;
        ok := found;
    else
        update public.sluice_in_flight
           set expires_ns = now_ns + p_lease_ns,
               expires_at = public.sluice_ceil_second(now_ns + p_lease_ns)
         where key_hash = v_hash and holder = p_holder;
        ok := found;
        if not ok and p_op = 'a' then
            select count(*) into held from public.sluice_in_flight where key_hash = v_hash and holder <> '';
            if held < p_max then
                insert into public.sluice_in_flight (key, holder, expires_ns, expires_at, key_hash)
                values (p_key, p_holder, now_ns + p_lease_ns, public.sluice_ceil_second(now_ns + p_lease_ns), v_hash);
                ok := true;
            end if;
        end if;
    end if;
    select count(*), min(expires_ns), max(expires_ns) into held, earliest_ns, latest_ns
      from public.sluice_in_flight where key_hash = v_hash and holder <> '';
    if held = 0 then
        delete from public.sluice_in_flight where key_hash = v_hash and holder = '';
    else
        update public.sluice_in_flight
           set expires_ns = latest_ns, expires_at = public.sluice_ceil_second(latest_ns)
         where key_hash = v_hash and holder = '';
    end if;
end;
$$;
