package dev.sluice.bench.postgres;

import dev.sluice.Limit;
import dev.sluice.bench.postgres.PostgresBenchmark.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * {@link PostgresBenchmark}'s pgbench row: {@code pgbench -M prepared} running exactly the statement
 * {@code PostgresRateLimiter} sends, {@code threads} clients for {@code seconds}, over {@code keys} keys or one hot key:
 * the ceiling of that statement on the machine, without a JVM in the way. pgbench is taken from the {@code PATH}.
 */
final class Pgbench {
    private final Limit limit;
    private final int keys;
    private final int threads;
    private final int seconds;
    private final String user;
    private final String password;
    private final boolean serializable;

    Pgbench(Limit limit, int keys, int threads, int seconds, String user, String password, boolean serializable) {
        this.limit = limit;
        this.keys = keys;
        this.threads = threads;
        this.seconds = seconds;
        this.user = user;
        this.password = password;
        this.serializable = serializable;
    }

    private static final Pattern TPS = Pattern.compile("tps = ([0-9.]+) \\(without initial connection time\\)");

    /** One run on {@code jdbcUrl}, as a row of the benchmark's table; null when pgbench is missing. */
    @Nullable
    Result run(String jdbcUrl, String workload, String sync, boolean hot) throws Exception {
        Matcher m = Pattern.compile("jdbc:postgresql://([^:/]+):(\\d+)/([^?]+)").matcher(jdbcUrl);
        if (!m.find()) {
            System.out.println("pgbench skipped: cannot read host, port and database from " + jdbcUrl);
            return null;
        }
        Path script = Files.createTempFile("sluice-pgbench", ".sql");
        String key = hot ? "'bench:0'" : "'bench:' || :k";
        Files.writeString(
                script,
                (hot ? "" : "\\set k random(0, " + (keys - 1) + ")\n")
                        + "select allowed, pre_backlog, pre_at_ns, now_ns, existed from public.sluice_bucket_acquire("
                        + key
                        + ", '" + limit.id() + "', 1, null, " + limit.timeScale() + ", " + limit.intervalScaled() + ", "
                        + limit.capacityScaled() + ", null, null);\n",
                StandardCharsets.UTF_8);
        try {
            ProcessBuilder pb = new ProcessBuilder(
                            "pgbench",
                            "-n",
                            "-M",
                            "prepared",
                            "-c",
                            String.valueOf(threads),
                            "-j",
                            "2",
                            "-T",
                            String.valueOf(seconds),
                            "-f",
                            script.toString(),
                            "-h",
                            m.group(1),
                            "-p",
                            m.group(2),
                            "-U",
                            user,
                            m.group(3))
                    .redirectErrorStream(true);
            pb.environment()
                    .put(
                            "PGOPTIONS",
                            "-c synchronous_commit=" + sync
                                    + (serializable ? " -c default_transaction_isolation=serializable" : ""));
            if (!password.isEmpty()) {
                pb.environment().put("PGPASSWORD", password);
            }
            Process p;
            try {
                p = pb.start();
            } catch (IOException e) {
                System.out.println("pgbench skipped: " + e.getMessage());
                return null;
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            Matcher tps = TPS.matcher(out);
            if (!tps.find()) {
                System.out.println("pgbench gave no tps:\n" + out);
                return null;
            }
            Matcher failed =
                    Pattern.compile("number of failed transactions: (\\d+)").matcher(out);
            long errors = failed.find() ? Long.parseLong(failed.group(1)) : 0;
            Result r = new Result(
                    "pgbench -M prepared (sluice statement)",
                    workload,
                    sync,
                    Double.parseDouble(tps.group(1)),
                    errors,
                    0);
            System.out.printf(
                    Locale.ROOT,
                    "%-30s %-10s sync=%-3s %,10.0f decisions/s%n",
                    r.store(),
                    workload,
                    sync,
                    r.perSecond());
            return r;
        } finally {
            Files.deleteIfExists(script);
        }
    }
}
