package dev.sluice.bench.redis;

import dev.sluice.redis.RedisRateLimiter;
import io.lettuce.core.api.StatefulRedisConnection;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@link RedisLoadBenchmark}'s ceiling: {@code redis-benchmark} sending the same scripts, no Java client. */
final class RedisBenchmarkCeiling {
    private RedisBenchmarkCeiling() {}

    /**
     * {@code redis-benchmark -c inFlight} running the same EVALSHAs (Sluice's gcra script with the ARGV
     * Sluice sends for a token bucket of 100 per second, and the minimal script): the ceiling of the script
     * on this Redis, with no client library in the way. Skipped when redis-benchmark is not on the PATH.
     */
    static void run(
            String uri,
            StatefulRedisConnection<String, String> admin,
            String minimalSha,
            String run,
            int seconds,
            int inFlight)
            throws Exception {
        io.lettuce.core.RedisURI u = io.lettuce.core.RedisURI.create(uri);
        // the text RedisRateLimiter loads for the token bucket: common.lua + gcra.lua + run.lua (LuaScripts)
        String sluiceScript = resource("common.lua") + "\n" + resource("gcra.lua") + "\n" + resource("run.lua");
        String sluiceSha = admin.sync().scriptLoad(sluiceScript);
        // tokenBucket(100, perSecond(100)): timeScale 1, interval 10^7 units, capacity 10^9 units, K = 1000
        List<String> sluiceArgs = List.of(
                "EVALSHA",
                sluiceSha,
                "1",
                "sluice:tb:100:1:10000000{bench:" + run + ":rb:__rand_int__}",
                "",
                "0",
                "g",
                "10000",
                "0",
                "1000000",
                "0",
                "1000",
                "", // the numbers of a named limit: none (unnamed)
                "", // gcra's stored value and its replacement: none (see gcra.lua)
                "");
        List<String> minimalArgs =
                List.of("EVALSHA", minimalSha, "1", "bench:" + run + ":rbm:__rand_int__", "10000", "100");
        int requests = Math.max(100_000, 30_000 * seconds);
        System.out.println("-- redis-benchmark -c " + inFlight + " -r 100000 -n " + requests
                + ", the same EVALSHA (no Java client)");
        for (var e : Map.of("sluice gcra.lua", sluiceArgs, "minimal GCRA", minimalArgs)
                .entrySet()) {
            List<String> cmd = new ArrayList<>(List.of(
                    "redis-benchmark",
                    "-h",
                    u.getHost(),
                    "-p",
                    Integer.toString(u.getPort()),
                    "-c",
                    Integer.toString(inFlight),
                    "-r",
                    "100000",
                    "-n",
                    Integer.toString(requests),
                    "-q"));
            cmd.addAll(e.getValue());
            Process p;
            try {
                p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            } catch (java.io.IOException notInstalled) {
                System.out.println("redis-benchmark is not on the PATH: skipped");
                return;
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            String rps = out.lines()
                    .filter(l -> l.contains("requests per second"))
                    .reduce((a, b) -> b)
                    .orElse(out.trim());
            int cr = rps.lastIndexOf('\r');
            System.out.printf(
                    Locale.ROOT,
                    "%-34s %s%n",
                    "redis-benchmark " + e.getKey(),
                    (cr >= 0 ? rps.substring(cr + 1) : rps).trim());
        }
    }

    private static String resource(String name) throws java.io.IOException {
        try (var in = RedisRateLimiter.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
