package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.RateLimiter;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * One process of {@link InFlightAcrossJvms}: a store's limiter (made by the class named in its first argument, a
 * {@code Function<String, RateLimiter>} with a public no-argument constructor, from its second) on the store's own
 * clock, taking slots of one key when told. It prints {@code ready}, then answers each line of its standard input with
 * one line:
 *
 * <ul>
 *   <li>{@code grab <n> <leaseMs> <prefix>}: n threads at once each acquire holder prefix-i;
 *       {@code grabbed <allowed>};</li>
 *   <li>{@code release <n> <prefix>}: releases holders prefix-0 to prefix-(n-1); {@code released <true answers>};</li>
 *   <li>{@code churn <threads> <rounds> <leaseMs> <counterFile>}: each thread acquires a holder of its own, counts it in
 *       the file shared by every process (under a file lock) after the store admitted it and uncounts it before it
 *       releases, so the file never counts more than the store holds; {@code churned <admissions> <highest count
 *       seen>};</li>
 *   <li>{@code hold <n> <leaseMs> <prefix> <renewMs>}: acquires holders prefix-0.. and renews them every renewMs (0:
 *       never) while this process lives; {@code holding <allowed>};</li>
 *   <li>{@code try <holder> <leaseMs>}: one acquire; {@code decision <allowed> <remaining> <retryAfterNanos>}.</li>
 * </ul>
 * Arguments: the factory class, its argument, the key, the maximum in flight.
 */
public final class InFlightChild {
    private InFlightChild() {}

    public static void main(String[] args) throws Exception {
        @SuppressWarnings("unchecked")
        Function<String, RateLimiter> factory = Class.forName(args[0])
                .asSubclass(Function.class)
                .getConstructor()
                .newInstance();
        String key = args[2];
        long max = Long.parseLong(args[3]);
        ScheduledExecutorService renewals = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "renewals");
            t.setDaemon(true);
            return t;
        });
        try (RateLimiter rl = factory.apply(args[1])) {
            InFlightLimiter slots = rl.inFlight();
            System.out.println("ready");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null && !line.equals("exit"); ) {
                String[] w = line.split(" ", -1);
                String answer = switch (w[0]) {
                    case "grab" -> "grabbed " + grab(slots, key, max, Integer.parseInt(w[1]), lease(w[2]), w[3]);
                    case "release" -> "released " + release(slots, key, Integer.parseInt(w[1]), w[2]);
                    case "churn" ->
                        churn(slots, key, max, Integer.parseInt(w[1]), Integer.parseInt(w[2]), lease(w[3]), w[4]);
                    case "hold" ->
                        "holding "
                                + hold(
                                        slots,
                                        key,
                                        max,
                                        Integer.parseInt(w[1]),
                                        lease(w[2]),
                                        w[3],
                                        Long.parseLong(w[4]),
                                        renewals);
                    case "try" -> {
                        Decision d = slots.tryAcquire(key, max, w[1], lease(w[2]));
                        yield "decision " + d.allowed() + " " + d.remaining() + " " + d.retryAfterNanos();
                    }
                    default -> throw new IllegalArgumentException("unknown command " + line);
                };
                System.out.println(answer);
                System.out.flush();
            }
        } finally {
            renewals.shutdownNow();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Thread started(Runnable body) {
        Thread t = new Thread(body);
        t.start();
        return t;
    }

    private static Duration lease(String millis) {
        return Duration.ofMillis(Long.parseLong(millis));
    }

    private static long grab(InFlightLimiter slots, String key, long max, int n, Duration lease, String prefix)
            throws InterruptedException {
        AtomicLong allowed = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String holder = prefix + "-" + i;
            threads.add(started(() -> {
                if (slots.tryAcquire(key, max, holder, lease).allowed()) {
                    allowed.incrementAndGet();
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        return allowed.get();
    }

    private static long release(InFlightLimiter slots, String key, int n, String prefix) {
        long released = 0;
        for (int i = 0; i < n; i++) {
            released += slots.release(key, prefix + "-" + i) ? 1 : 0;
        }
        return released;
    }

    private static String churn(
            InFlightLimiter slots, String key, long max, int threads, int rounds, Duration lease, String file)
            throws InterruptedException {
        AtomicLong admitted = new AtomicLong();
        AtomicLong highest = new AtomicLong();
        String process = ProcessHandle.current().pid() + "";
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            running.add(started(() -> {
                for (int r = 0; r < rounds; r++) {
                    String holder = "churn-" + process + "-" + thread + "-" + r;
                    if (slots.tryAcquire(key, max, holder, lease).allowed()) {
                        admitted.incrementAndGet();
                        highest.accumulateAndGet(count(file, 1), Math::max);
                        sleep(5); // the work: long enough that the slots are all held at times
                        count(file, -1);
                        if (!slots.release(key, holder)) {
                            throw new IllegalStateException(holder + " held a slot and could not release it");
                        }
                    }
                }
            }));
        }
        for (Thread t : running) {
            t.join();
        }
        return "churned " + admitted + " " + highest;
    }

    /** Adds {@code delta} to the count in {@code file}, shared by every process, under a file lock; returns it. */
    private static synchronized long count(String file, long delta) {
        try (RandomAccessFile f = new RandomAccessFile(file, "rw")) {
            FileLock lock = f.getChannel().lock();
            try {
                long n = (f.length() >= 8 ? f.readLong() : 0) + delta;
                f.seek(0);
                f.writeLong(n);
                return n;
            } finally {
                lock.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long hold(
            InFlightLimiter slots,
            String key,
            long max,
            int n,
            Duration lease,
            String prefix,
            long renewMillis,
            ScheduledExecutorService renewals) {
        long allowed = 0;
        for (int i = 0; i < n; i++) {
            String holder = prefix + "-" + i;
            if (slots.tryAcquire(key, max, holder, lease).allowed()) {
                allowed++;
                if (renewMillis > 0) {
                    ScheduledFuture<?> unused = renewals.scheduleWithFixedDelay(
                            () -> slots.renew(key, holder, lease), renewMillis, renewMillis, TimeUnit.MILLISECONDS);
                }
            }
        }
        return allowed;
    }
}
