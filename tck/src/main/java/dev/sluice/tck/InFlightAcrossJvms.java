package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Work in flight across processes, the acceptance test of issue 30: three JVMs ({@link InFlightChild}) on one shared
 * store, on the store's own clock, take slots of one key with a maximum of {@value #MAX}:
 *
 * <ol>
 *   <li>all at once, 5 threads each: exactly {@value #MAX} are admitted between them; released, all of them;</li>
 *   <li>churning (acquire, count, uncount, release) in every process at once: the count the processes keep in a file
 *       under a file lock, which never counts a slot the store does not hold, is never above {@value #MAX};</li>
 *   <li>one process holds 3 slots with a short lease, renewing them, another 3 with a long one; the first is killed
 *       ({@link Process#destroyForcibly()}, SIGKILL on Linux) while holding: right after, the third process is denied
 *       (its slots are still held), and once their lease has ended by the store's clock the third takes exactly those
 *       3 slots, and is denied a fourth.</li>
 * </ol>
 * Counted, not timed: the only waits are for a lease to end, each bounded by a hang guard of more than 10 leases.
 */
public final class InFlightAcrossJvms {
    private InFlightAcrossJvms() {}

    static final int MAX = 6;
    /** The dying process's lease: renewed every {@link #RENEW_MILLIS} while it lives. */
    static final long SHORT_LEASE_MILLIS = 2_500;

    static final long RENEW_MILLIS = 200;
    static final long LONG_LEASE_MILLIS = 120_000;

    /**
     * Runs the three processes on the store that {@code factory} (a class with a public no-argument constructor, on
     * this JVM's class path) makes from {@code argument}, e.g. a Redis URI. {@code storeMicros} reads the store's clock
     * (epoch microseconds: Redis's {@code TIME}, PostgreSQL's {@code clock_timestamp()}), by which the killed holder's
     * slots must not come back before their lease has ended.
     */
    public static void run(
            Class<? extends Function<String, RateLimiter>> factory, String argument, LongSupplier storeMicros)
            throws Exception {
        String key = "in-flight-jvms:{" + UUID.randomUUID() + "}";
        Path counter = Files.createTempFile("sluice-in-flight", ".count");
        List<Child> children = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                children.add(new Child(factory, argument, key));
            }
            // 1. all at once: exactly MAX between them
            long grabbed = 0;
            for (Child c : children) {
                c.send("grab 5 " + LONG_LEASE_MILLIS + " grab-" + children.indexOf(c));
            }
            for (Child c : children) {
                grabbed += Long.parseLong(c.answer("grabbed"));
            }
            assertThat(grabbed).as("slots taken by three JVMs at once").isEqualTo(MAX);
            long released = 0;
            for (Child c : children) {
                released += Long.parseLong(c.ask("release 5 grab-" + children.indexOf(c), "released"));
            }
            assertThat(released).as("each slot released once, by its holder").isEqualTo(MAX);

            // 2. churning everywhere at once: never more than MAX held
            for (Child c : children) {
                c.send("churn 4 30 " + LONG_LEASE_MILLIS + " " + counter);
            }
            long admissions = 0;
            long highest = 0;
            for (Child c : children) {
                String[] churned = c.answer("churned").split(" ", -1);
                admissions += Long.parseLong(churned[0]);
                highest = Math.max(highest, Long.parseLong(churned[1]));
                assertThat(Long.parseLong(churned[1]))
                        .as("slots counted at once across the JVMs")
                        .isBetween(1L, (long) MAX);
            }
            assertThat(admissions).isPositive();
            System.out.println("three JVMs: " + grabbed + " grabbed at once, " + admissions
                    + " churning admissions, at most " + highest + " counted at once (max " + MAX + ")");

            // 3. a holder killed while holding gives its slots back when its lease ends, not before
            Child dies = children.get(0);
            Child lives = children.get(1);
            Child asks = children.get(2);
            assertThat(dies.ask("hold 3 " + SHORT_LEASE_MILLIS + " dies " + RENEW_MILLIS, "holding"))
                    .isEqualTo("3");
            assertThat(lives.ask("hold 3 " + LONG_LEASE_MILLIS + " lives 0", "holding"))
                    .isEqualTo("3");
            dies.kill();
            long beforeFirst = storeMicros.getAsLong();
            String[] first =
                    asks.ask("try asks-0 " + LONG_LEASE_MILLIS, "decision").split(" ", -1);
            assertThat(first[0])
                    .as("right after the kill its slots are still held")
                    .isEqualTo("false");
            assertThat(first[1]).as("remaining").isEqualTo("0");
            assertThat(Long.parseLong(first[2]))
                    .as("retryAfter: until the killed holder's earliest lease ends")
                    .isBetween(1L, TimeUnit.MILLISECONDS.toNanos(SHORT_LEASE_MILLIS));
            // the earliest lease ends at the first try's instant plus its retryAfter, so not before this instant
            long leaseEndAtLeast = beforeFirst + Long.parseLong(first[2]) / 1000;
            long[] firstAllowedAtMost = {0};
            for (int i = 0; i < 3; i++) {
                String holder = "asks-" + i;
                Eventually.await(
                        Duration.ofMillis(20 * SHORT_LEASE_MILLIS),
                        "the killed holder's slot " + i + " is free once its lease ended",
                        () -> {
                            boolean allowed = asks.ask("try " + holder + " " + LONG_LEASE_MILLIS, "decision")
                                    .startsWith("true");
                            if (allowed && firstAllowedAtMost[0] == 0) {
                                firstAllowedAtMost[0] = storeMicros.getAsLong();
                            }
                            return allowed;
                        });
            }
            assertThat(firstAllowedAtMost[0])
                    .as("by the store's clock, a killed holder's slot is not free before its lease ended")
                    .isGreaterThanOrEqualTo(leaseEndAtLeast);
            String[] fourth =
                    asks.ask("try asks-3 " + LONG_LEASE_MILLIS, "decision").split(" ", -1);
            assertThat(fourth[0] + " " + fourth[1])
                    .as("3 living slots and 3 taken again: the maximum, exactly")
                    .isEqualTo("false 0");
        } finally {
            for (Child c : children) {
                c.kill();
            }
            Files.deleteIfExists(counter);
        }
    }

    /** One child process and its pipes. */
    private static final class Child {
        private final Process process;
        private final BufferedReader out;
        private final Writer in;

        Child(Class<?> factory, String argument, String key) throws IOException {
            Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
            process = new ProcessBuilder(
                            java.toString(),
                            "-Xmx128m",
                            "-cp",
                            System.getProperty("java.class.path"),
                            InFlightChild.class.getName(),
                            factory.getName(),
                            argument,
                            key,
                            String.valueOf(MAX))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            answer("ready");
        }

        void send(String command) {
            try {
                in.write(command + "\n");
                in.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The next line, which must start with {@code word}, without it. */
        String answer(String word) {
            String line;
            try {
                line = out.readLine(); // a hang guard: the child's own calls are bounded by the store's budget
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            assertThat(line).as("the child's answer").isNotNull().startsWith(word);
            return line.substring(word.length()).trim();
        }

        String ask(String command, String word) {
            send(command);
            return answer(word);
        }

        void kill() throws InterruptedException {
            process.destroyForcibly();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("killed").isTrue();
        }
    }
}
