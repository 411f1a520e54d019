-- Sluice PostgreSQL / YugabyteDB store: tables, indexes and helpers.
--
-- Apply with:  psql -v ON_ERROR_STOP=1 -f 001_tables.sql   (then 002..., in order)
-- or from Java: PostgresRateLimiter.builder(dataSource).build().migrate()
-- Idempotent: every statement is CREATE ... IF NOT EXISTS or CREATE OR REPLACE (the schema is created
-- only when pg_namespace lacks it, so a role without CREATE on the database can apply these files).
--
-- Names: the files say schema "public" and table prefix "sluice_". A limiter built with
-- .schema("rl").tablePrefix("app_") renders them as "rl"."app_bucket" and so on;
-- `java -cp sluice-postgres.jar:sluice-core.jar dev.sluice.postgres.Migrations rl app_` prints that SQL.
--
-- Runs on PostgreSQL 12+ and YugabyteDB YSQL: no MERGE, no generated columns, nothing newer than 12.
--
-- Every state table is keyed by (key_hash, limit_id):
--   key_hash  sha256 of the key's UTF-8 bytes. Keys may be 4,096 characters (16 KiB of UTF-8), more
--             than a B-tree entry may hold, so the index holds the digest and the key sits beside it.
--             On YugabyteDB the first primary-key column is hash-sharded: rows spread by key.
--   limit_id  Limit.identity(): an unnamed limit's numbers, Limit.id(), e.g. 'tb:10:1:1000000000' (token
--             bucket, capacity 10, 1 permit per 1e9 ns) or 'fw:100:60000000000' (fixed window, 100 per 60 s);
--             a named limit's algorithm and name, e.g. 'tb@api'. The same key under two identities is two rows.
--   numbers   null for an unnamed limit (limit_id holds its numbers); for a named one the Limit.id() its
--             state was written under, so a call with other numbers reads that state under its own
--             (dev.sluice.algorithm.Inheritance: what was spent carries over). Added after the first
--             release: every row written before it is an unnamed limit's, and null is right for it.
--   expires_at from this instant on the row equals a fresh key's state and may be deleted (the expiry
--             cleaner does, in batches; deleting it early would lose state, so it is rounded up, to the
--             whole second).

-- The schema, created only when it is missing: CREATE SCHEMA IF NOT EXISTS checks the CREATE privilege on
-- the database before it looks whether the schema exists, so a least-privilege role that owns (or may
-- create in) an existing schema could not apply this file otherwise.
do $$
begin
    if not exists (select 1 from pg_catalog.pg_namespace where nspname = 'public') then
        create schema if not exists public;
    end if;
end $$;

-- Token bucket and GCRA (one algorithm under two names): the instant the bucket is full again,
-- the theoretical arrival time TAT, kept exactly as a backlog B = TAT - at_ns in units of
-- 1/time_scale ns (time_scale and the interval are the last two numbers of Limit.id()).
-- Tokens at t: capacity - max(0, B - (t - at_ns)·time_scale) / interval.
create table if not exists public.sluice_bucket (
    key         text        not null,
    limit_id    text        not null,
    backlog     bigint      not null,   -- B: how far TAT lies ahead of at_ns, in 1/time_scale ns
    at_ns       bigint      not null,   -- epoch nanoseconds of the last allowed call (B measured then)
    expires_at  timestamptz not null,   -- TAT rounded up to the second: the bucket is full again
    key_hash    bytea       not null,
    primary key (key_hash, limit_id)
);
create index if not exists sluice_bucket_expires_at on public.sluice_bucket (expires_at asc);
alter table public.sluice_bucket add column if not exists numbers text;

-- Fixed window and sliding window (counter): the counts of window number window_no = floor(t / W)
-- and of the window before it (sliding window only; always 0 for a fixed window).
create table if not exists public.sluice_window (
    key             text        not null,
    limit_id        text        not null,
    window_no       bigint      not null,   -- k = floor(epoch ns / W), W the last number of limit_id
    previous_count  bigint      not null,   -- permits counted in window k - 1 (sliding window)
    current_count   bigint      not null,   -- permits counted in window k
    expires_at      timestamptz not null,   -- both windows are over: the counts are zero again
    key_hash        bytea       not null,
    primary key (key_hash, limit_id)
);
create index if not exists sluice_window_expires_at on public.sluice_window (expires_at asc);
alter table public.sluice_window add column if not exists numbers text;

-- Sliding log: every admission in the trailing window, oldest first, one entry per instant.
create table if not exists public.sluice_log (
    key         text        not null,
    limit_id    text        not null,
    at_ns       bigint[]    not null,   -- epoch nanoseconds of each admission
    costs       bigint[]    not null,   -- permits taken at that instant
    expires_at  timestamptz not null,   -- the newest entry has left the window
    key_hash    bytea       not null,
    primary key (key_hash, limit_id)
);
create index if not exists sluice_log_expires_at on public.sluice_log (expires_at asc);
alter table public.sluice_log add column if not exists numbers text;

-- The index digest of a key. A person looking up a key by hand writes
--   select * from public.sluice_bucket where key_hash = public.sluice_key_hash('user:42');
create or replace function public.sluice_key_hash(p_key text) returns bytea
language sql immutable strict parallel safe as $$
    select sha256(convert_to(p_key, 'UTF8'))
$$;

-- A timestamptz as epoch nanoseconds (microsecond precision). Built from whole seconds and the
-- microseconds field so that it is exact on PostgreSQL 12 and 13, where extract() returns a double.
create or replace function public.sluice_epoch_ns(p_ts timestamptz) returns bigint
language sql immutable strict parallel safe as $$
    select extract(epoch from date_trunc('second', p_ts at time zone 'UTC'))::bigint * 1000000000
         + (extract(microseconds from p_ts at time zone 'UTC')::bigint % 1000000) * 1000
$$;

-- clock_timestamp() as epoch nanoseconds: the store's clock.
create or replace function public.sluice_now_ns() returns bigint
language sql volatile parallel safe as $$
    select public.sluice_epoch_ns(clock_timestamp())
$$;

-- Epoch nanoseconds as a timestamptz, rounded up to the microsecond (never early).
create or replace function public.sluice_timestamp(p_ns bigint) returns timestamptz
language sql immutable strict parallel safe as $$
    select timestamptz 'epoch'
         + (q / 1000000) * interval '1 second'
         + (q % 1000000) * interval '1 microsecond'
    from (select case when p_ns % 1000 > 0 then p_ns / 1000 + 1 else p_ns / 1000 end as q) s
$$;

-- Epoch nanoseconds as a timestamptz rounded up to the whole second: how expires_at is kept (never early;
-- a coarse value changes less often, so more updates of a busy row stay HOT). Inlined where used.
create or replace function public.sluice_ceil_second(p_ns bigint) returns timestamptz
language sql immutable parallel safe as $$
    select to_timestamp(p_ns / 1000000000 + case when p_ns % 1000000000 > 0 then 1 else 0 end)
$$;
