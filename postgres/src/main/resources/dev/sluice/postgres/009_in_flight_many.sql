-- Work in flight, batched: many slot steps (sluice_in_flight_step, 008_in_flight.sql) in one statement and one
-- commit. The limiter sends one key's steps in one statement at a time (dev.sluice.store.Batching), so the steps of one
-- process on a hot key never wait for each other's head-row lock, nor conflict with each other under SERIALIZABLE:
-- they go many to a statement, and their conflicts come only from other processes.
--
-- Element i is the step sluice_in_flight_step(p_ops[i], p_keys[i], p_holders[i], p_maxes[i], p_leases_ns[i],
-- p_now_ns[i]) and answers as that call alone would, with ord = i. The elements are run in one fixed order, key digest
-- then array position: those of one key in the order they came, and the head rows of several keys locked in the
-- order every batch locks them (no deadlock between two batches).
create or replace function public.sluice_in_flight_many(
    p_ops text[], p_keys text[], p_holders text[], p_maxes bigint[], p_leases_ns bigint[], p_now_ns bigint[])
returns table (ord int, ok boolean, held bigint, earliest_ns bigint, latest_ns bigint, now_ns bigint)
language plpgsql as $$
declare
    r record;
begin
    for r in
        select u.i from unnest(p_keys) with ordinality as u(k, i)
         order by sha256(convert_to(u.k, 'UTF8')), u.i
    loop
        ord := r.i;
        select s.ok, s.held, s.earliest_ns, s.latest_ns, s.now_ns
          into ok, held, earliest_ns, latest_ns, now_ns
          from public.sluice_in_flight_step(p_ops[r.i], p_keys[r.i], p_holders[r.i], p_maxes[r.i], p_leases_ns[r.i],
                                            p_now_ns[r.i]) s;
        return next;
    end loop;
end $$;
