package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Exact;
import dev.sluice.algorithm.Inheritance;
import dev.sluice.algorithm.LogState;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;
import dev.sluice.postgres.JdbcAttempt.Db;
import dev.sluice.store.StoreClock;
import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A multi-permit request as one transaction: one statement per table locks (or creates) every row the request
 * names, in one fixed order (table, then key digest, then limit id), and reads their state; the pure steps run
 * here, in request order, repeated (key, limit) pairs one after another; when every permit is allowed the new
 * states are written in one batch and committed, otherwise nothing is taken. Because every locker uses the same
 * order, two multi-permit requests cannot deadlock. Concurrent requests share one such transaction and one commit
 * ({@link #acquireEach}, sent by the limiter's batches): decided one after the other, each all or nothing, as if
 * each were its own transaction in that order.
 */
final class MultiPermitTransaction {
    private final Sql sql;
    /** Whose clock decides: the database's, or a client ticker's (tests). */
    private final StoreClock clock;

    MultiPermitTransaction(Sql sql, StoreClock clock) {
        this.sql = sql;
        this.clock = clock;
    }

    private record Id(String key, String limitId) {}

    /** The value of an id the request named: every one has its limit, and its state once locked. */
    private static <V> V known(Map<Id, V> byId, Id id) {
        return Objects.requireNonNull(byId.get(id), "every (key, limit) of the request is known");
    }

    /**
     * A multi-permit request as the batches queue it: answered with its {@link PermitDecisions}; its failures name
     * its first permit's key and limit. Its batch key is its own call: no two requests share one, so a batch may hold
     * any requests (their rows' locks order them in the database).
     */
    record Request(List<Permit> permits, DecisionCall call, CompletableFuture<PermitDecisions> result)
            implements Batcher.Queued {
        @Override
        public String key() {
            return permits.get(0).key();
        }

        @Override
        public Limit limit() {
            return permits.get(0).limit();
        }

        @Override
        public Object batchKey() {
            return call;
        }
    }

    /** Each permit's own decision beside the overall one, as {@link PermitDecisions} defines them. */
    PermitDecisions acquireAll(Db c, List<Permit> permits) throws SQLException {
        return transaction(c, List.of(permits)).get(0);
    }

    /**
     * The batch's requests in one transaction, in order, each as if it were its own transaction in that order: every
     * row of the batch locked at once, the requests decided one after the other on the states the earlier ones left,
     * what the allowed ones took written in one commit.
     */
    List<PermitDecisions> acquireEach(Db c, List<Request> batch) throws SQLException {
        List<List<Permit>> requests = new ArrayList<>(batch.size());
        for (Request r : batch) {
            requests.add(r.permits());
        }
        return transaction(c, requests);
    }

    private List<PermitDecisions> transaction(Db c, List<List<Permit>> requests) throws SQLException {
        Map<Id, Limit> limits = new LinkedHashMap<>(); // each row's first limit: the numbers the lock reads it under
        Map<Table, List<Id>> byTable = new EnumMap<>(Table.class);
        for (List<Permit> permits : requests) {
            for (Permit p : permits) {
                Id id = new Id(p.key(), Table.limitId(p.limit()));
                if (limits.putIfAbsent(id, p.limit()) == null) {
                    byTable.computeIfAbsent(Table.of(p.limit()), t -> new ArrayList<>())
                            .add(id);
                }
            }
        }
        StoreClock.Reading reading = clock.read();
        boolean auto = c.connection().getAutoCommit();
        c.connection().setAutoCommit(false);
        boolean committed = false;
        try {
            Map<Id, State> states = new HashMap<>();
            Map<Id, String> numbers = new HashMap<>();
            long dbClock = Long.MIN_VALUE;
            for (Map.Entry<Table, List<Id>> e : byTable.entrySet()) {
                dbClock = Math.max(dbClock, lock(c, e.getKey(), e.getValue(), limits, states, numbers));
            }
            long now = reading.store() ? dbClock : reading.clientNanos();
            for (Map.Entry<Id, State> e : states.entrySet()) {
                if (!numbers.containsKey(e.getKey())) { // a state under other numbers is in other units
                    now = Math.max(now, latestInstant(e.getValue(), known(limits, e.getKey())));
                }
            }
            // rows written under other numbers of a name: read under the request's, and written so even if it is
            // denied (the reference model's and the SQL functions' way)
            Map<Id, State> written = new HashMap<>();
            for (Map.Entry<Id, String> e : numbers.entrySet()) {
                Id id = e.getKey();
                State s = StoredNumbers.read(known(states, id), e.getValue(), now, known(limits, id));
                states.put(id, s);
                written.put(id, s);
            }
            Map<Id, Limit> under = new HashMap<>(limits); // the limit each row's state is now in the units of
            List<PermitDecisions> out = new ArrayList<>(requests.size());
            for (List<Permit> permits : requests) {
                out.add(decide(permits, states, under, written, now));
            }
            if (!written.isEmpty()) { // else nothing was taken: the rollback leaves every row as it was
                write(c, written, under);
                c.connection().commit();
                committed = true;
            }
            return out;
        } finally {
            if (!committed) {
                try {
                    c.connection().rollback();
                } catch (SQLException ignored) {
                    // the connection is broken; the pool discards it
                }
            }
            try {
                c.connection().setAutoCommit(auto);
            } catch (SQLException ignored) {
                // as above
            }
        }
    }

    /**
     * One request on the states the earlier ones left, as its own transaction would decide it and as the reference
     * model does: a row an earlier request left under other numbers of its name is first read under this request's
     * (and written so, even if it is denied); then the pure steps in request order, each permit reading its row's
     * state under its own limit's numbers ({@link Inheritance#carryOver}: a row named twice under two sets of numbers
     * is read over), repeated (key, limit) pairs one after another; when every permit is allowed its states become the
     * current ones, to be written under the last numbers that named them, otherwise nothing is taken and each permit's
     * own decision is its look at its row.
     */
    private static PermitDecisions decide(
            List<Permit> permits, Map<Id, State> states, Map<Id, Limit> under, Map<Id, State> written, long now) {
        Map<Id, State> scratch = new HashMap<>();
        Map<Id, Limit> scratchUnder = new HashMap<>();
        Id[] ids = new Id[permits.size()];
        for (int i = 0; i < ids.length; i++) {
            Permit p = permits.get(i);
            Id id = new Id(p.key(), Table.limitId(p.limit()));
            ids[i] = id;
            Limit was = known(under, id);
            if (!scratch.containsKey(id) && !was.equals(p.limit())) {
                State s = Inheritance.carryOver(known(states, id), now, was, p.limit());
                states.put(id, s);
                written.put(id, s);
                under.put(id, p.limit());
            }
            scratch.put(id, known(states, id));
            scratchUnder.put(id, known(under, id));
        }
        List<Decision> decisions = new ArrayList<>(permits.size());
        boolean all = true;
        for (int i = 0; i < ids.length; i++) {
            Permit p = permits.get(i);
            Id id = ids[i];
            State s = Inheritance.carryOver(known(scratch, id), now, known(scratchUnder, id), p.limit());
            Step step = Algorithms.tryAcquire(s, now, p.limit(), p.cost());
            scratch.put(id, step.state());
            scratchUnder.put(id, p.limit());
            decisions.add(step.decision());
            all &= step.decision().allowed();
        }
        Decision overall = Decision.mostRestrictive(decisions);
        if (all) {
            states.putAll(scratch);
            written.putAll(scratch);
            under.putAll(scratchUnder);
            return new PermitDecisions(overall, decisions);
        }
        List<Decision> looks = new ArrayList<>(permits.size());
        for (int i = 0; i < ids.length; i++) {
            Permit p = permits.get(i);
            State s = Inheritance.carryOver(known(states, ids[i]), now, known(under, ids[i]), p.limit());
            looks.add(Algorithms.peek(s, now, p.limit(), p.cost()));
        }
        return new PermitDecisions(overall, looks);
    }

    /** Locks (creating fresh rows where none exist) and reads the rows of one table; returns the database clock. */
    private long lock(
            Db c, Table table, List<Id> ids, Map<Id, Limit> limits, Map<Id, State> states, Map<Id, String> numbers)
            throws SQLException {
        String[] keys = new String[ids.size()];
        String[] limitIds = new String[ids.size()];
        String[] numbersOf = new String[ids.size()]; // a fresh row carries the numbers it is read under
        for (int i = 0; i < keys.length; i++) {
            keys[i] = ids.get(i).key();
            limitIds[i] = ids.get(i).limitId();
            numbersOf[i] = Table.numbers(known(limits, ids.get(i)));
        }
        long clock = Long.MIN_VALUE;
        try (PreparedStatement ps = c.prepare(table.lock(sql))) {
            ps.setArray(1, c.connection().createArrayOf("text", keys));
            ps.setArray(2, c.connection().createArrayOf("text", limitIds));
            ps.setArray(3, c.connection().createArrayOf("text", numbersOf));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Id id = new Id(rs.getString(1), rs.getString(2));
                    Limit limit = limits.get(id);
                    if (limit == null) {
                        throw new SQLException("the lock statement returned a row that was not asked for", "XX000");
                    }
                    State s = switch (limit.algorithm()) {
                        case TOKEN_BUCKET, GCRA -> new TatState(rs.getLong(3), rs.getLong(4));
                        case FIXED_WINDOW -> new WindowState(rs.getLong(3), rs.getLong(5));
                        case SLIDING_WINDOW -> new SlidingWindowState(rs.getLong(3), rs.getLong(4), rs.getLong(5));
                        case SLIDING_LOG -> new LogState(longs(rs.getArray(3)), longs(rs.getArray(4)));
                    };
                    states.put(id, s);
                    String stored = rs.getString(table == Table.WINDOW ? 7 : 6);
                    if (stored != null && !stored.equals(Table.numbers(limit))) {
                        numbers.put(id, stored);
                    }
                    clock = Math.max(clock, rs.getLong(table == Table.WINDOW ? 6 : 5));
                }
            }
        }
        for (Id id : ids) {
            if (!states.containsKey(id)) {
                throw new SQLException(
                        "the lock statement returned no row for key " + Permit.abbreviate(id.key()), "XX000");
            }
        }
        return clock;
    }

    /** Writes the new state of every (key, limit) of an allowed multi-permit request, one batch per table. */
    private void write(Db c, Map<Id, State> states, Map<Id, Limit> limits) throws SQLException {
        Map<Table, PreparedStatement> batches = new EnumMap<>(Table.class);
        try {
            for (Map.Entry<Id, State> e : states.entrySet()) {
                Limit limit = known(limits, e.getKey());
                Table table = Table.of(limit);
                PreparedStatement ps = batches.get(table);
                if (ps == null) {
                    ps = c.prepare(table.update(sql));
                    batches.put(table, ps);
                }
                State s = e.getValue();
                int i = 1;
                switch (limit.algorithm()) {
                    case TOKEN_BUCKET, GCRA -> {
                        TatState t = (TatState) s;
                        ps.setLong(i++, t.backlogScaled());
                        ps.setLong(i++, t.atNanos());
                        ps.setString(i++, Table.numbers(limit));
                    }
                    case FIXED_WINDOW -> {
                        WindowState w = (WindowState) s;
                        ps.setLong(i++, w.window());
                        ps.setLong(i++, 0);
                        ps.setLong(i++, w.count());
                        ps.setString(i++, Table.numbers(limit));
                    }
                    case SLIDING_WINDOW -> {
                        SlidingWindowState w = (SlidingWindowState) s;
                        ps.setLong(i++, w.window());
                        ps.setLong(i++, w.previous());
                        ps.setLong(i++, w.current());
                        ps.setString(i++, Table.numbers(limit));
                    }
                    case SLIDING_LOG -> {
                        LogState l = (LogState) s;
                        ps.setArray(i++, c.connection().createArrayOf("bigint", boxed(l.times())));
                        ps.setArray(i++, c.connection().createArrayOf("bigint", boxed(l.costs())));
                        ps.setString(i++, Table.numbers(limit));
                    }
                }
                ps.setLong(i++, ceilToSecond(expiresAtNanos(s, limit)));
                ps.setString(i++, e.getKey().key());
                ps.setString(i, e.getKey().limitId());
                ps.addBatch();
            }
            for (PreparedStatement ps : batches.values()) {
                ps.executeBatch();
            }
        } finally {
            for (PreparedStatement ps : batches.values()) {
                ps.close();
            }
        }
    }

    /** When a state equals a fresh key's again: what the SQL functions store as expires_at. */
    static long expiresAtNanos(State s, Limit limit) {
        if (s instanceof TatState t) {
            return t.atNanos() + Exact.ceilDiv(t.backlogScaled(), limit.timeScale());
        }
        if (s instanceof WindowState w) {
            return (w.window() + 1) * limit.periodNanos();
        }
        if (s instanceof SlidingWindowState w) {
            return (w.window() + 2) * limit.periodNanos();
        }
        LogState l = (LogState) s;
        return l.size() == 0 ? Long.MIN_VALUE : l.time(l.size() - 1) + limit.periodNanos();
    }

    /** expires_at is kept to the second, rounded up (never early), as the SQL functions keep it. */
    static long ceilToSecond(long nanos) {
        return Math.floorDiv(nanos, 1_000_000_000L) * 1_000_000_000L
                + (Math.floorMod(nanos, 1_000_000_000L) > 0 ? 1_000_000_000L : 0);
    }

    /** The latest instant a state was written at: a decision never happens before it. */
    static long latestInstant(State s, Limit limit) {
        if (s instanceof TatState t) {
            return t.atNanos();
        }
        if (s instanceof WindowState w) {
            return w.window() == Long.MIN_VALUE ? Long.MIN_VALUE : w.window() * limit.periodNanos();
        }
        if (s instanceof SlidingWindowState w) {
            return w.window() == Long.MIN_VALUE ? Long.MIN_VALUE : w.window() * limit.periodNanos();
        }
        LogState l = (LogState) s;
        return l.size() == 0 ? Long.MIN_VALUE : l.time(l.size() - 1);
    }

    static long[] longs(Array array) throws SQLException {
        if (array == null) {
            return new long[0];
        }
        Object[] values = (Object[]) array.getArray();
        long[] out = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = ((Number) values[i]).longValue();
        }
        array.free();
        return out;
    }

    static Long[] boxed(long[] values) {
        Long[] out = new Long[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = values[i];
        }
        return out;
    }
}
