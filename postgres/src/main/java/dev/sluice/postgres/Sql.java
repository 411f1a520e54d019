package dev.sluice.postgres;

/**
 * Every statement the limiter sends, rendered once for its schema and prefix. Values always travel as
 * bind parameters; only the validated, quoted schema and prefix are spliced in.
 */
final class Sql {
    final String bucketAcquire;
    final String bucketAcquireMany;
    final String fixedWindowAcquire;
    final String slidingWindowAcquire;
    final String slidingLogAcquire;
    final String bucketLock;
    final String windowLock;
    final String logLock;
    final String bucketUpdate;
    final String windowUpdate;
    final String logUpdate;
    final String bucketReset;
    final String windowReset;
    final String logReset;
    final String bucketPeek;
    final String windowPeek;
    final String logPeek;
    final String bucketClean;
    final String windowClean;
    final String logClean;
    final String pendingClean;
    final String bucketEstimate;
    final String fixedWindowEstimate;
    final String slidingWindowEstimate;
    final String slidingLogEstimate;
    final String bucketSettle;
    final String fixedWindowSettle;
    final String slidingWindowSettle;
    final String slidingLogSettle;
    final String bucketBatch;
    /**
     * Fails (42P01, 42883) on a schema the newest migrations have not reached (no in-flight table, or no batched slot
     * steps): build() then migrates it.
     */
    final String newestTable;
    /** Work in flight: one step of {@code 008_in_flight.sql}, many ({@code 009_in_flight_many.sql}), their clean. */
    final String inFlightStep;

    final String inFlightMany;

    final String inFlightClean;
    final String probe;

    Sql(String schema, String prefix) {
        String s = Migrations.quote(Migrations.checkSchema(schema)) + ".";
        String p = Migrations.checkPrefix(prefix);
        String bucket = s + Migrations.quote(p + "bucket");
        String window = s + Migrations.quote(p + "window");
        String log = s + Migrations.quote(p + "log");
        String now = s + Migrations.quote(p + "now_ns") + "()";
        String ts = s + Migrations.quote(p + "timestamp");
        String hash = "sha256(convert_to(%s, 'UTF8'))";

        bucketAcquire = "select allowed, pre_backlog, pre_at_ns, now_ns, existed from " + s
                + Migrations.quote(p + "bucket_acquire") + "(?, ?, ?, ?, ?, ?, ?, ?, ?)";
        bucketAcquireMany = "select ord, allowed, pre_backlog, pre_at_ns, now_ns, existed from " + s
                + Migrations.quote(p + "bucket_acquire_many") + "(?::text[], ?::text[], ?::bigint[], ?::bigint[],"
                + " ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[])";
        // both window counters are one function (003_fixed_window.sql), told which by its first argument
        String windowAcquire = s + Migrations.quote(p + "window_acquire");
        fixedWindowAcquire = "select allowed, pre_window_no, pre_current, now_ns, existed from " + windowAcquire
                + "(false, ?, ?, ?, ?, ?, ?, ?)";
        slidingWindowAcquire = "select allowed, pre_window_no, pre_previous, pre_current, now_ns, existed from "
                + windowAcquire + "(true, ?, ?, ?, ?, ?, ?, ?)";
        slidingLogAcquire = "select allowed, pre_at_ns, pre_costs, now_ns, existed from " + s
                + Migrations.quote(p + "sliding_log_acquire") + "(?, ?, ?, ?, ?, ?, ?)";

        // multi-permit: lock every row in one fixed order (digest, then limit id), creating fresh rows as
        // needed, and read the state; the no-op DO UPDATE is what locks an existing row and returns it
        String lockTail = " from unnest(?::text[], ?::text[]) as u(k, l) order by 6, 2"
                + " on conflict (key_hash, limit_id) do update set key = excluded.key returning ";
        String numbered = "?::text[]) as u(k, l)";
        String numberedAs = "?::text[], ?::text[]) as u(k, l, n)";
        // a fresh row carries the numbers it is read under (null for an unnamed limit)
        bucketLock = "insert into " + bucket + " as t (key, limit_id, backlog, at_ns, expires_at, key_hash, numbers)"
                + " select u.k, u.l, 0, 0, '-infinity'::timestamptz, " + hash.formatted("u.k") + ", u.n"
                + lockTail.replace(numbered, numberedAs)
                + "t.key, t.limit_id, t.backlog, t.at_ns, " + now + ", t.numbers";
        windowLock = "insert into " + window
                + " as t (key, limit_id, window_no, previous_count, current_count, expires_at, key_hash, numbers)"
                + " select u.k, u.l, -9223372036854775808, 0, 0, '-infinity'::timestamptz, " + hash.formatted("u.k")
                + ", u.n" + lockTail.replace("order by 6, 2", "order by 7, 2").replace(numbered, numberedAs)
                + "t.key, t.limit_id, t.window_no, t.previous_count, t.current_count, " + now + ", t.numbers";
        logLock = "insert into " + log + " as t (key, limit_id, at_ns, costs, expires_at, key_hash, numbers)"
                + " select u.k, u.l, '{}'::bigint[], '{}'::bigint[], '-infinity'::timestamptz, " + hash.formatted("u.k")
                + ", u.n" + lockTail.replace(numbered, numberedAs) + "t.key, t.limit_id, t.at_ns, t.costs, " + now
                + ", t.numbers";
        String where = " where key_hash = " + hash.formatted("?") + " and limit_id = ?";
        bucketUpdate =
                "update " + bucket + " set backlog = ?, at_ns = ?, numbers = ?, expires_at = " + ts + "(?)" + where;
        windowUpdate = "update " + window
                + " set window_no = ?, previous_count = ?, current_count = ?, numbers = ?, expires_at = "
                + ts + "(?)" + where;
        logUpdate = "update " + log + " set at_ns = ?, costs = ?, numbers = ?, expires_at = " + ts + "(?)" + where;

        // peek: the row as it is (or none) and the clock, in one plain SELECT: no lock, no write, no insert
        String peekTail = " s on s.key_hash = " + hash.formatted("?") + " and s.limit_id = ?";
        bucketPeek = "select n.now_ns, s.backlog, s.at_ns, s.numbers from (select " + now + " as now_ns) n left join "
                + bucket + peekTail;
        windowPeek = "select n.now_ns, s.window_no, s.previous_count, s.current_count, s.numbers from (select " + now
                + " as now_ns) n left join " + window + peekTail;
        logPeek = "select n.now_ns, s.at_ns, s.costs, s.numbers from (select " + now + " as now_ns) n left join " + log
                + peekTail;

        bucketReset = "delete from " + bucket + where;
        windowReset = "delete from " + window + where;
        logReset = "delete from " + log + where;

        // statement_timestamp() rather than clock_timestamp(): a stable bound lets the expires_at index serve
        String cleanTail = " where expires_at <= coalesce(" + ts + "(?), statement_timestamp())"
                + " limit ? for update skip locked)";
        bucketClean = "delete from " + bucket + " where (key_hash, limit_id) in (select key_hash, limit_id from "
                + bucket + cleanTail;
        windowClean = "delete from " + window + " where (key_hash, limit_id) in (select key_hash, limit_id from "
                + window + cleanTail;
        logClean = "delete from " + log + " where (key_hash, limit_id) in (select key_hash, limit_id from " + log
                + cleanTail;
        String pending = s + Migrations.quote(p + "pending");
        pendingClean = "delete from " + pending + " where (key_hash, limit_id, id) in (select key_hash, limit_id, id"
                + " from " + pending + cleanTail;

        // costs known afterwards (007_settle.sql): the acquire functions' parameters and answer, then the reservation
        bucketEstimate = bucketAcquire
                .replace(Migrations.quote(p + "bucket_acquire"), Migrations.quote(p + "bucket_estimate"))
                .replace("?)", "?, ?, ?)");
        String windowEstimate = s + Migrations.quote(p + "window_estimate");
        fixedWindowEstimate =
                fixedWindowAcquire.replace(windowAcquire, windowEstimate).replace("?)", "?, ?, ?)");
        slidingWindowEstimate =
                slidingWindowAcquire.replace(windowAcquire, windowEstimate).replace("?)", "?, ?, ?)");
        slidingLogEstimate = slidingLogAcquire
                .replace(Migrations.quote(p + "sliding_log_acquire"), Migrations.quote(p + "sliding_log_estimate"))
                .replace("?)", "?, ?, ?)");
        String settled = "settled, estimate, reserved_ns, adjusted, ";
        bucketSettle = "select " + settled + "pre_backlog, pre_at_ns, post_backlog, now_ns from " + s
                + Migrations.quote(p + "bucket_settle") + "(?, ?, ?, ?, ?, ?, ?, ?, ?)";
        String windowSettle = "select " + settled
                + "pre_window_no, pre_previous, pre_current, post_previous, post_current, now_ns from " + s
                + Migrations.quote(p + "window_settle");
        fixedWindowSettle = windowSettle + "(false, ?, ?, ?, ?, ?, ?, ?, ?)";
        slidingWindowSettle = windowSettle + "(true, ?, ?, ?, ?, ?, ?, ?, ?)";
        bucketBatch = "select ord, allowed, pre_backlog, pre_at_ns, now_ns, already_pending, " + settled
                + "pre_backlog, pre_at_ns, post_backlog, now_ns from " + s + Migrations.quote(p + "bucket_batch")
                + "(?::int[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],"
                + " ?::bigint[], ?::text[], ?::text[], ?::bigint[])";
        slidingLogSettle = "select " + settled + "pre_at_ns, pre_costs, post_at_ns, post_costs, now_ns from " + s
                + Migrations.quote(p + "sliding_log_settle") + "(?, ?, ?, ?, ?, ?, ?, ?)";
        String inFlight = s + Migrations.quote(p + "in_flight");
        inFlightStep = "select ok, held, earliest_ns, latest_ns, now_ns from " + s
                + Migrations.quote(p + "in_flight_step") + "(?, ?, ?, ?, ?, ?)";
        String many = s + Migrations.quote(p + "in_flight_many");
        inFlightMany = "select ord, ok, held, earliest_ns, latest_ns, now_ns from " + many
                + "(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[])";
        inFlightClean = "delete from " + inFlight + " where (key_hash, holder) in (select key_hash, holder from "
                + inFlight + cleanTail;
        // the cast fails with 42883 when 009's function is missing; the subquery with 42P01 when 008's table is
        newestTable = "select '" + many + "(text[], text[], text[], bigint[], bigint[], bigint[])'::regprocedure,"
                + " (select 1 from " + inFlight + " limit 0)";
        probe = "select " + now;
    }
}
