package dev.sluice.bench.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.postgres.PostgresRateLimiter;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Work in flight on one PostgreSQL: {@code --callers} threads (32) acquire a slot on one of {@code --keys} keys (4),
 * at most {@code --max} (8) held per key, and release it when allowed, as fast as they can, through one
 * {@link PostgresRateLimiter} (its defaults, and {@code batching(false)}) over a HikariCP pool of {@code --connections}
 * (16). Prints steps (acquires and releases) per second, the statements the limiter sent per step (counted on the JDBC
 * side: every {@code execute*} of a prepared statement), its retries and the errors that reached a caller. Runs
 * {@code --rounds} (3) rounds of every configuration, interleaved.
 *
 * <pre>
 * java -cp ... dev.sluice.bench.postgres.SlotsBenchmark [--url jdbc:postgresql://host:5432/db --user u --password p]
 *        [--seconds 5] [--warmup 2] [--callers 32] [--keys 4] [--max 8] [--connections 16] [--rounds 3]
 *        [--serializable false]
 * </pre>
 *
 * Without {@code --url} it starts an embedded PostgreSQL 17 (fsync off, synchronous_commit on) and stops it at the end.
 */
public final class SlotsBenchmark {
    private static final Set<String> EXECUTES = Set.of("execute", "executeQuery", "executeUpdate");
    private static final Duration LEASE = Duration.ofMinutes(1);

    private final Map<String, String> a;
    private final int seconds;
    private final int warmup;
    private final int callers;
    private final int keys;
    private final int max;

    private SlotsBenchmark(Map<String, String> a) {
        this.a = a;
        this.seconds = Integer.parseInt(a.getOrDefault("seconds", "5"));
        this.warmup = Integer.parseInt(a.getOrDefault("warmup", "2"));
        this.callers = Integer.parseInt(a.getOrDefault("callers", "32"));
        this.keys = Integer.parseInt(a.getOrDefault("keys", "4"));
        this.max = Integer.parseInt(a.getOrDefault("max", "8"));
    }

    public static void main(String[] args) throws Exception {
        new SlotsBenchmark(PostgresBenchmark.options(args)).run();
    }

    private void run() throws Exception {
        EmbeddedPostgres embedded = null;
        String url = a.get("url");
        if (url == null) {
            embedded = EmbeddedPostgres.builder()
                    .setServerConfig("max_connections", "100")
                    .setServerConfig("synchronous_commit", "on")
                    .start();
            url = embedded.getJdbcUrl("postgres", "postgres");
        }
        int rounds = Integer.parseInt(a.getOrDefault("rounds", "3"));
        boolean serializable = Boolean.parseBoolean(a.getOrDefault("serializable", "false"));
        System.out.printf(
                Locale.ROOT,
                "# %d callers, %d keys, at most %d slots each, %d connections, %d s a run after %d s warm-up%s%n",
                callers,
                keys,
                max,
                Integer.parseInt(a.getOrDefault("connections", "16")),
                seconds,
                warmup,
                serializable ? ", default_transaction_isolation = serializable" : "");
        System.out.println("| round | limiter | steps/s | statements/step | retries | errors | load (1 min) |");
        System.out.println("|---:|---|---:|---:|---:|---:|---:|");
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setUsername(a.getOrDefault("user", "postgres"));
        c.setPassword(a.get("password"));
        int connections = Integer.parseInt(a.getOrDefault("connections", "16"));
        c.setMaximumPoolSize(connections);
        c.setMinimumIdle(connections);
        if (serializable) {
            c.setConnectionInitSql("set default_transaction_isolation = serializable");
        }
        try (HikariDataSource pool = new HikariDataSource(c)) {
            for (int round = 1; round <= rounds; round++) {
                for (boolean batching : new boolean[] {true, false}) {
                    measure(pool, round, batching, connections);
                }
            }
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    private void measure(DataSource pool, int round, boolean batching, int connections) throws Exception {
        LongAdder statements = new LongAdder();
        PostgresRateLimiter.Builder b =
                PostgresRateLimiter.builder(counting(pool, statements)).threads(connections);
        try (PostgresRateLimiter rl = batching ? b.build() : b.batching(false).build()) {
            InFlightLimiter slots = rl.inFlight();
            String prefix = "bench-slots:" + round + ":" + batching + ":";
            AtomicBoolean measuring = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            LongAdder steps = new LongAdder();
            LongAdder errors = new LongAdder();
            AtomicLong holders = new AtomicLong();
            CountDownLatch done = new CountDownLatch(callers);
            for (int t = 0; t < callers; t++) {
                Thread th = new Thread(() -> {
                    try {
                        while (!stop.get()) {
                            String key = prefix + ThreadLocalRandom.current().nextInt(keys);
                            String holder = "h" + holders.incrementAndGet();
                            try {
                                Decision d = slots.tryAcquire(key, max, holder, LEASE);
                                int n = 1;
                                if (d.allowed()) {
                                    slots.release(key, holder);
                                    n++;
                                }
                                if (measuring.get()) {
                                    steps.add(n);
                                }
                            } catch (RuntimeException e) {
                                if (measuring.get()) {
                                    errors.increment();
                                }
                            }
                        }
                    } finally {
                        done.countDown();
                    }
                });
                th.setDaemon(true);
                th.start();
            }
            TimeUnit.SECONDS.sleep(warmup);
            long retriesBefore = rl.stats().retries();
            long sentBefore = statements.sum();
            long start = System.nanoTime();
            measuring.set(true);
            TimeUnit.SECONDS.sleep(seconds);
            measuring.set(false);
            double elapsed = (System.nanoTime() - start) / 1e9;
            long sent = statements.sum() - sentBefore; // read with the steps: the same window, give or take a call
            long made = steps.sum();
            long retries = rl.stats().retries() - retriesBefore;
            stop.set(true);
            if (!done.await(1, TimeUnit.MINUTES)) {
                System.out.println("# callers still busy after a minute");
            }
            System.out.printf(
                    Locale.ROOT,
                    "| %d | %s | %,.0f | %.3f | %d | %d | %s |%n",
                    round,
                    batching ? "default (batched)" : "batching(false)",
                    made / elapsed,
                    made == 0 ? 0.0 : (double) sent / made,
                    retries,
                    errors.sum(),
                    load());
        }
    }

    private static String load() {
        return String.format(
                Locale.ROOT,
                "%.1f",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    /** {@code pool} with every execute of a prepared statement counted in {@code count}. */
    private static DataSource counting(DataSource pool, LongAdder count) {
        return (DataSource) Proxy.newProxyInstance(
                SlotsBenchmark.class.getClassLoader(), new Class<?>[] {DataSource.class}, (p, m, args) -> {
                    Object r = invoke(pool, m, args);
                    return r instanceof Connection conn ? connection(conn, count) : r;
                });
    }

    private static Connection connection(Connection c, LongAdder count) {
        return (Connection) Proxy.newProxyInstance(
                SlotsBenchmark.class.getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                    Object r = invoke(c, m, args);
                    if (r instanceof PreparedStatement ps) {
                        return Proxy.newProxyInstance(
                                SlotsBenchmark.class.getClassLoader(),
                                new Class<?>[] {PreparedStatement.class},
                                (p2, m2, args2) -> {
                                    if (EXECUTES.contains(m2.getName())) {
                                        count.increment();
                                    }
                                    return invoke(ps, m2, args2);
                                });
                    }
                    return r;
                });
    }

    private static @Nullable Object invoke(Object target, java.lang.reflect.Method m, Object @Nullable [] args)
            throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
