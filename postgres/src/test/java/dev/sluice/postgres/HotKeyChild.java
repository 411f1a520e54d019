package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Limit;
import dev.sluice.Rate;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One of {@link SerializableHotKeyTest}'s processes: a limiter with the defaults (the budget included) on a pool whose sessions run
 * SERIALIZABLE, {@code threads} threads deciding {@code calls} times each on one key under two limits of
 * {@code capacity}, a token bucket that refills one a day (batched) and a sliding log of a day (on the workers), in
 * turn. It prints {@code ready} once built, starts when a line arrives on its standard input (so that every process
 * decides at once), and ends with one line: {@code admitted=<bucket>,<log> errors=… retries=… first-error=…}.
 *
 * <p>Arguments: JDBC URL, key, capacity, threads, calls per thread.
 */
final class HotKeyChild {
    private HotKeyChild() {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String key = args[1];
        long capacity = Long.parseLong(args[2]);
        Limit bucket = Limit.tokenBucket(capacity, Rate.perDay(1));
        Limit log = Limit.slidingLog(capacity, Duration.ofDays(1));
        int threads = Integer.parseInt(args[3]);
        int calls = Integer.parseInt(args[4]);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(4);
        config.setConnectionInitSql("set default_transaction_isolation = serializable");
        try (HikariDataSource ds = new HikariDataSource(config);
                PostgresRateLimiter rl = PostgresRateLimiter.builder(ds)
                        .threads(4) // as many as the pool's connections
                        .build()) {
            System.out.println("ready");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            AtomicLong admittedBucket = new AtomicLong();
            AtomicLong admittedLog = new AtomicLong();
            AtomicLong errors = new AtomicLong();
            AtomicReference<String> firstError = new AtomicReference<>("none");
            List<Thread> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    for (int n = 0; n < calls; n++) {
                        try {
                            if (rl.tryAcquire(key, bucket).allowed()) {
                                admittedBucket.incrementAndGet();
                            }
                            if (rl.tryAcquire(key, log).allowed()) {
                                admittedLog.incrementAndGet();
                            }
                        } catch (RuntimeException e) {
                            errors.incrementAndGet();
                            firstError.compareAndSet("none", e.toString().replace('\n', ' '));
                        }
                    }
                });
                th.start();
                running.add(th);
            }
            for (Thread th : running) {
                th.join();
            }
            System.out.println("admitted=" + admittedBucket + "," + admittedLog + " errors=" + errors + " retries="
                    + rl.stats().retries() + " first-error=" + firstError.get());
        }
    }
}
