-- Costs known only afterwards (RateLimiter.tryAcquireEstimate, then settle): a reservation takes its estimate as
-- tryAcquire does and stays pending until it is settled on the actual cost, or until settleWithin has passed by
-- the store's clock, when its estimate stands.
--
-- One pending reservation per (key, limit identity, reservation id). Its numbers are those the settle needs:
--   estimate      the permits the reservation took
--   reserved_ns   the store's now (epoch ns) when the estimate was allowed: the decision's instant
--   settle_by_ns  reserved_ns + settleWithin: from this instant on it is no longer pending
--   expires_at    settle_by_ns rounded up to the microsecond, for the expiry cleaner (never early)
create table if not exists public.sluice_pending (
    key           text        not null,
    limit_id      text        not null,
    id            text        not null,   -- the caller's reservation id: 1 to 128 visible ASCII characters
    estimate      bigint      not null,
    reserved_ns   bigint      not null,
    settle_by_ns  bigint      not null,
    expires_at    timestamptz not null,
    key_hash      bytea       not null,
    primary key (key_hash, limit_id, id)
);
create index if not exists sluice_pending_expires_at on public.sluice_pending (expires_at asc);

-- A reservation already pending at p_now_ns (or the database's clock): the caller reused an id. SQLSTATE SL001,
-- which the client turns into an IllegalArgumentException; the statement rolls back, so nothing is taken.
create or replace function public.sluice_pending_check(p_key text, p_hash bytea, p_limit_id text, p_id text,
                                                       p_now_ns bigint)
returns void language plpgsql as $$
begin
    if exists (select 1 from public.sluice_pending r
                where r.key_hash = p_hash and r.limit_id = p_limit_id and r.id = p_id
                  and r.settle_by_ns > coalesce(p_now_ns, public.sluice_now_ns())) then
        raise exception 'sluice: reservation % is already pending on key % under %', p_id, p_key, p_limit_id
            using errcode = 'SL001';
    end if;
end $$;

-- Records an allowed estimate as pending (replacing an expired reservation of the same id). A reservation of the
-- same id pending meanwhile (a concurrent estimate won the race) raises SL001: the decision rolls back with it.
create or replace function public.sluice_pending_add(p_key text, p_hash bytea, p_limit_id text, p_id text,
                                                     p_estimate bigint, p_now_ns bigint, p_within_ns bigint)
returns void language plpgsql as $$
begin
    insert into public.sluice_pending as r (key, limit_id, id, estimate, reserved_ns, settle_by_ns, expires_at,
                                            key_hash)
    values (p_key, p_limit_id, p_id, p_estimate, p_now_ns, p_now_ns + p_within_ns,
            public.sluice_timestamp(p_now_ns + p_within_ns), p_hash)
    on conflict (key_hash, limit_id, id) do update
       set key = excluded.key, estimate = excluded.estimate, reserved_ns = excluded.reserved_ns,
           settle_by_ns = excluded.settle_by_ns, expires_at = excluded.expires_at
     where r.settle_by_ns <= p_now_ns;
    if not found then
        raise exception 'sluice: reservation % is already pending on key % under %', p_id, p_key, p_limit_id
            using errcode = 'SL001';
    end if;
end $$;

-- tryAcquireEstimate: the acquire function's decision on the estimate (same parameters, same answer), plus the
-- pending reservation when allowed, in one statement. Parameters: the acquire function's, then p_id (the
-- reservation id) and p_within_ns (settleWithin in ns).
create or replace function public.sluice_bucket_estimate(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint,
    p_time_scale bigint, p_interval_scaled bigint, p_capacity_scaled bigint, p_max_wait_scaled bigint,
    p_numbers text, p_id text, p_within_ns bigint,
    out allowed boolean, out pre_backlog bigint, out pre_at_ns bigint, out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash bytea := sha256(convert_to(p_key, 'UTF8'));
begin
    perform public.sluice_pending_check(p_key, v_hash, p_limit_id, p_id, p_now_ns);
    select a.allowed, a.pre_backlog, a.pre_at_ns, a.now_ns, a.existed
      into allowed, pre_backlog, pre_at_ns, now_ns, existed
      from public.sluice_bucket_acquire(p_key, p_limit_id, p_cost, p_now_ns, p_time_scale, p_interval_scaled,
                                        p_capacity_scaled, p_max_wait_scaled, p_numbers) a;
    if allowed then
        perform public.sluice_pending_add(p_key, v_hash, p_limit_id, p_id, p_cost, now_ns, p_within_ns);
    end if;
end $$;

create or replace function public.sluice_window_estimate(
    p_sliding boolean, p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint,
    p_capacity bigint, p_numbers text, p_id text, p_within_ns bigint,
    out allowed boolean, out pre_window_no bigint, out pre_previous bigint, out pre_current bigint,
    out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash bytea := sha256(convert_to(p_key, 'UTF8'));
begin
    perform public.sluice_pending_check(p_key, v_hash, p_limit_id, p_id, p_now_ns);
    select a.allowed, a.pre_window_no, a.pre_previous, a.pre_current, a.now_ns, a.existed
      into allowed, pre_window_no, pre_previous, pre_current, now_ns, existed
      from public.sluice_window_acquire(p_sliding, p_key, p_limit_id, p_cost, p_now_ns, p_window_ns, p_capacity,
                                        p_numbers) a;
    if allowed then
        perform public.sluice_pending_add(p_key, v_hash, p_limit_id, p_id, p_cost, now_ns, p_within_ns);
    end if;
end $$;

create or replace function public.sluice_sliding_log_estimate(
    p_key text, p_limit_id text, p_cost bigint, p_now_ns bigint, p_window_ns bigint, p_capacity bigint,
    p_numbers text, p_id text, p_within_ns bigint,
    out allowed boolean, out pre_at_ns bigint[], out pre_costs bigint[], out now_ns bigint, out existed boolean)
language plpgsql as $$
declare
    v_hash bytea := sha256(convert_to(p_key, 'UTF8'));
begin
    perform public.sluice_pending_check(p_key, v_hash, p_limit_id, p_id, p_now_ns);
    select a.allowed, a.pre_at_ns, a.pre_costs, a.now_ns, a.existed
      into allowed, pre_at_ns, pre_costs, now_ns, existed
      from public.sluice_sliding_log_acquire(p_key, p_limit_id, p_cost, p_now_ns, p_window_ns, p_capacity,
                                             p_numbers) a;
    if allowed then
        perform public.sluice_pending_add(p_key, v_hash, p_limit_id, p_id, p_cost, now_ns, p_within_ns);
    end if;
end $$;

-- settle: takes the reservation off the pending table if it is still pending at now (else settled is false and
-- nothing changes), locks the key's row (creating a fresh one when there is none; reading a row written under
-- other numbers of the same name under these first, as a decision does: a decision of cost 0), and applies
-- d = actual - estimate at now as dev.sluice.RateLimiter#settle defines it per algorithm. Returns the state found
-- (pre_*), the state written (post_*), what was charged (> 0) or given back (< 0), and the now it used; the client
-- computes the permits remaining from the state written.
--
-- Takes a reservation off the pending table if it is still pending at p_now_ns: its estimate and instant, or nulls.
create or replace function public.sluice_pending_take(p_hash bytea, p_limit_id text, p_id text, p_now_ns bigint,
                                                      out estimate bigint, out reserved_ns bigint)
language sql as $$
    delete from public.sluice_pending r
     where r.key_hash = p_hash and r.limit_id = p_limit_id and r.id = p_id and r.settle_by_ns > p_now_ns
    returning r.estimate, r.reserved_ns
$$;

-- Token bucket and GCRA: B = the backlog at now; d > 0: B' = B + d·P (no capacity check: a debt), at most 2^62;
-- d < 0: B' = max(0, B - |d|·P), adjusted = -floor((B - B') / P).
create or replace function public.sluice_bucket_settle(
    p_key text, p_limit_id text, p_id text, p_actual bigint, p_now_ns bigint,
    p_time_scale bigint, p_interval_scaled bigint, p_capacity_scaled bigint, p_numbers text,
    out settled boolean, out estimate bigint, out reserved_ns bigint, out adjusted bigint,
    out pre_backlog bigint, out pre_at_ns bigint, out post_backlog bigint, out now_ns bigint)
language plpgsql as $$
declare
    v_hash    bytea := sha256(convert_to(p_key, 'UTF8'));
    v_now     bigint := coalesce(p_now_ns, public.sluice_now_ns());
    v_numbers text;
    v_d       bigint;
    v_b       bigint;
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
        select s.backlog, s.at_ns, s.numbers into pre_backlog, pre_at_ns, v_numbers
          from public.sluice_bucket s
         where s.key_hash = v_hash and s.limit_id = p_limit_id
           for update;
        if not found then
            insert into public.sluice_bucket (key, limit_id, backlog, at_ns, expires_at, key_hash, numbers)
            values (p_key, p_limit_id, 0, v_now, '-infinity'::timestamptz, v_hash, p_numbers)
            on conflict do nothing;
        elsif v_numbers is distinct from p_numbers then
            perform public.sluice_bucket_acquire(p_key, p_limit_id, 0, v_now, p_time_scale, p_interval_scaled,
                                                 p_capacity_scaled, null, p_numbers);
        else
            exit;
        end if;
        v_tries := v_tries + 1;
        if v_tries >= 100 then
            raise exception 'sluice: key % under % kept changing under the settle', p_key, p_limit_id
                using errcode = '40001';
        end if;
    end loop;
    now_ns := greatest(v_now, pre_at_ns);
    v_b := public.sluice_backlog_at(pre_backlog, pre_at_ns, now_ns, p_time_scale);
    if v_d >= 0 then
        post_backlog := least(v_b::numeric + v_d::numeric * p_interval_scaled, 4611686018427387904)::bigint;
        adjusted := v_d;
    else
        post_backlog := greatest(0, v_b + v_d * p_interval_scaled);
        adjusted := -((v_b - post_backlog) / p_interval_scaled);
    end if;
    update public.sluice_bucket s
       set backlog = post_backlog, at_ns = now_ns,
           expires_at = public.sluice_full_at(now_ns, post_backlog, p_time_scale)
     where s.key_hash = v_hash and s.limit_id = p_limit_id;
end $$;

-- Token-bucket and GCRA decisions, estimates and settles in one call, for the batches (Batcher) that carry an estimate
-- or a settle among concurrent decisions: one round trip and one commit for all, element by element exactly as each
-- one's own function would do it, in the fixed row order of sluice_bucket_acquire_many (key digest, limit id, array
-- position). p_ops[i]: 0 a decision (sluice_bucket_acquire), 1 an estimate (sluice_bucket_estimate; p_ids[i] and
-- p_withins_ns[i] its reservation), 2 a settle (sluice_bucket_settle; p_costs[i] the actual cost). An estimate whose id
-- is already pending answers already_pending and takes nothing (its block rolls back alone), the others still go.
create or replace function public.sluice_bucket_batch(
    p_ops int[], p_keys text[], p_limit_ids text[], p_costs bigint[], p_now_ns bigint[],
    p_time_scales bigint[], p_intervals_scaled bigint[], p_capacities_scaled bigint[], p_max_waits_scaled bigint[],
    p_numbers text[], p_ids text[], p_withins_ns bigint[])
returns table (ord int, allowed boolean, pre_backlog bigint, pre_at_ns bigint, now_ns bigint, already_pending boolean,
               settled boolean, estimate bigint, reserved_ns bigint, adjusted bigint, post_backlog bigint)
language plpgsql as $$
declare
    r record;
begin
    for r in
        select u.i from unnest(p_keys, p_limit_ids) with ordinality as u(k, l, i)
         order by sha256(convert_to(u.k, 'UTF8')), u.l, u.i
    loop
        ord := r.i;
        allowed := false;
        already_pending := false;
        settled := false;
        estimate := 0;
        reserved_ns := 0;
        adjusted := 0;
        post_backlog := 0;
        if p_ops[r.i] = 2 then
            select s.settled, s.estimate, s.reserved_ns, s.adjusted, s.pre_backlog, s.pre_at_ns, s.post_backlog,
                   s.now_ns
              into settled, estimate, reserved_ns, adjusted, pre_backlog, pre_at_ns, post_backlog, now_ns
              from public.sluice_bucket_settle(p_keys[r.i], p_limit_ids[r.i], p_ids[r.i], p_costs[r.i], p_now_ns[r.i],
                      p_time_scales[r.i], p_intervals_scaled[r.i], p_capacities_scaled[r.i], p_numbers[r.i]) s;
        elsif p_ops[r.i] = 1 then
            begin
                select a.allowed, a.pre_backlog, a.pre_at_ns, a.now_ns
                  into allowed, pre_backlog, pre_at_ns, now_ns
                  from public.sluice_bucket_estimate(p_keys[r.i], p_limit_ids[r.i], p_costs[r.i], p_now_ns[r.i],
                          p_time_scales[r.i], p_intervals_scaled[r.i], p_capacities_scaled[r.i], null,
                          p_numbers[r.i], p_ids[r.i], p_withins_ns[r.i]) a;
            exception when sqlstate 'SL001' then
                already_pending := true;
            end;
        else
            select a.allowed, a.pre_backlog, a.pre_at_ns, a.now_ns
              into allowed, pre_backlog, pre_at_ns, now_ns
              from public.sluice_bucket_acquire(p_keys[r.i], p_limit_ids[r.i], p_costs[r.i], p_now_ns[r.i],
                      p_time_scales[r.i], p_intervals_scaled[r.i], p_capacities_scaled[r.i], p_max_waits_scaled[r.i],
                      p_numbers[r.i]) a;
        end if;
        return next;
    end loop;
end $$;
