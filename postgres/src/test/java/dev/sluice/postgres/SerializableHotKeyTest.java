package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 29: a hot key under {@code default_transaction_isolation = serializable} never fails a call while the budget
 * lasts, on a busy machine and across processes. Counted, not timed: every call ends in a decision, and exactly the
 * capacity is admitted (the limits refill one a day, the windows last a day: nothing refills before the hang guards
 * would fail the test).
 *
 * <p>The limiters have every default, the time budget included ({@link RetryPolicy#DEFAULT}: 1 s). With 250 ms, the
 * default until then, on this shared 2-core machine with other builds beside it (load 10 to 23), the three JVMs failed
 * in 5 of 14 runs before conflicts were
 * retried past one budget (1 to 6 decisions of 7,200: conflicts that outlasted the budget, decisions queued behind
 * their row's statement) and in 3 of 13 runs after (1 to 10: a statement that took more than 250 ms while nothing
 * else of its process was answered, which the limiter cannot tell from a paused database, or a retry's wait for a
 * pooled connection, which now gets a budget of its own); the eight threads beside two busy processes did not fail
 * in 135 runs of 320 decisions, before and after, but did once at load 15 (a sliding log's decision that waited
 * 250 ms for a worker thread).
 */
class SerializableHotKeyTest {
    /**
     * 8 threads on one hot key beside two processes that keep both cores busy, 5 runs, each with the default limiter
     * (a token bucket, batched), a sliding log (on the workers) and {@code batching(false)}: 0 errors, exact, and not
     * one conflict (one process's statements on a row never race each other).
     */
    @Test
    void eightThreadsOnAHotKeyBesideTwoBusyProcessesNeverFailAndAdmitExactly() throws Exception {
        int threads = 8;
        int callsPerThread = 40;
        long capacity = 100;
        List<Process> hogs = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int i = 0; i < 2; i++) {
                hogs.add(new ProcessBuilder("sh", "-c", "while :; do :; done").start());
            }
            List<UnaryOperator<PostgresRateLimiter.Builder>> limiters = List.of(b -> b, b -> b, b -> b.batching(false));
            List<Limit> limits = List.of(
                    Limit.tokenBucket(capacity, Rate.perDay(1)),
                    Limit.slidingLog(capacity, Duration.ofDays(1)),
                    Limit.tokenBucket(capacity, Rate.perDay(1)));
            for (int run = 1; run <= 5; run++) {
                for (int c = 0; c < limits.size(); c++) {
                    Limit limit = limits.get(c);
                    try (PostgresRateLimiter rl = limiters.get(c)
                            .apply(PostgresRateLimiter.builder(TestDatabase.serializable()))
                            .build()) {
                        String key = "serializable-hot:" + UUID.randomUUID();
                        long admitted = admittedAtOnce(pool, threads, callsPerThread, () -> rl.tryAcquire(key, limit));
                        String what = "run " + run + ", " + limit + (c == 2 ? ", batching(false)" : "");
                        System.out.println(what + ": admitted " + admitted + ", " + rl.stats());
                        assertThat(admitted).as(what).isEqualTo(capacity);
                        assertThat(rl.stats().retries())
                                .as("%s: one process's statements on a row never race each other", what)
                                .isZero();
                    }
                }
            }
        } finally {
            pool.shutdownNow();
            for (Process hog : hogs) {
                hog.destroyForcibly();
                hog.waitFor(10, TimeUnit.SECONDS);
            }
        }
        assertThat(hogs).hasSize(2).noneMatch(Process::isAlive);
    }

    /**
     * {@code threads} threads of {@code pool} make {@code calls} decisions each, all starting at once; returns how many
     * were allowed. Whatever reaches a caller (an error) fails the test.
     */
    static long admittedAtOnce(ExecutorService pool, int threads, int calls, Callable<Decision> decide)
            throws Exception {
        AtomicLong admitted = new AtomicLong();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(pool.submit(() -> {
                start.await();
                for (int n = 0; n < calls; n++) {
                    if (decide.call().allowed()) {
                        admitted.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : done) {
            f.get(2, TimeUnit.MINUTES); // rethrows whatever reached a caller; a hang guard
        }
        return admitted.get();
    }

    private static final Pattern RESULT =
            Pattern.compile("^admitted=(\\d+),(\\d+) errors=(\\d+) retries=(\\d+) first-error=(.*)$");

    /**
     * Three JVMs (this test's class path, {@link HotKeyChild}) with the default limiter on one hot key, each 8 threads
     * deciding at once under a token bucket (batched) and a sliding log (on the workers): their conflicts are each
     * other's, retried within the budget: 0 errors, exactly the capacity of each admitted between them.
     */
    @Test
    void threeJvmsOnAHotKeyNeverFailAndAdmitExactlyBetweenThem() throws Exception {
        String key = "serializable-jvms:" + UUID.randomUUID();
        long capacity = 1_000;
        int threads = 8;
        int calls = 50; // 3 × 8 × 50 = 1,200 calls for 1,000 permits, under each limit
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<Process> children = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                children.add(new ProcessBuilder(
                                java.toString(),
                                "-Xmx128m",
                                "-cp",
                                System.getProperty("java.class.path"),
                                HotKeyChild.class.getName(),
                                TestDatabase.jdbcUrl(),
                                key,
                                String.valueOf(capacity),
                                String.valueOf(threads),
                                String.valueOf(calls))
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start());
            }
            List<BufferedReader> outs = new ArrayList<>();
            for (Process p : children) {
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                assertThat(out.readLine()).as("a child built its limiter").isEqualTo("ready");
                outs.add(out);
            }
            for (Process p : children) { // all at once
                Writer in = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
                in.write("go\n");
                in.flush();
            }
            long admittedBucket = 0;
            long admittedLog = 0;
            long errors = 0;
            long retries = 0;
            for (int i = 0; i < children.size(); i++) {
                assertThat(children.get(i).waitFor(5, TimeUnit.MINUTES))
                        .as("a hang guard")
                        .isTrue();
                String last = null;
                for (String line; (line = outs.get(i).readLine()) != null; ) {
                    last = line;
                }
                assertThat(last).as("child %d's result", i).isNotNull().matches(RESULT);
                Matcher m = RESULT.matcher(last);
                assertThat(m.matches()).isTrue();
                System.out.println("child " + i + ": " + last);
                admittedBucket += Long.parseLong(m.group(1));
                admittedLog += Long.parseLong(m.group(2));
                errors += Long.parseLong(m.group(3));
                retries += Long.parseLong(m.group(4));
                assertThat(children.get(i).exitValue()).isZero();
            }
            System.out.println("three JVMs: admitted " + admittedBucket + " (token bucket) and " + admittedLog
                    + " (sliding log), errors " + errors + ", retries " + retries);
            assertThat(errors).isZero();
            assertThat(admittedBucket).isEqualTo(capacity);
            assertThat(admittedLog).isEqualTo(capacity);
        } finally {
            for (Process p : children) {
                p.destroyForcibly();
            }
        }
    }
}
