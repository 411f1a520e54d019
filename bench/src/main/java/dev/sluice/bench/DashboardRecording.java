package dev.sluice.bench;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.dashboard.DeniedKeys;
import dev.sluice.server.decision.CheckRequest;
import dev.sluice.server.decision.CheckResult;
import dev.sluice.server.decision.CheckResult.Outcome;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the dashboard adds to the decision path of {@code sluice serve} (issue 17): an admitted descriptor adds
 * nothing (its count is the existing {@code sluice_decisions_total} counter, which the dashboard only reads), a
 * denied one adds {@link DeniedKeys#record} of its store key.
 *
 * <ul>
 *   <li>{@code admitCounter}, {@code denyCounter}: {@link ServerMetrics#decision} as every descriptor pays it, with
 *       and without the dashboard (for scale);</li>
 *   <li>{@code denyRecorded}: a denial as it is now, the counter and the sketch; minus {@code denyCounter}, the
 *       sketch's cost; {@code recordOnly}: the sketch alone;</li>
 *   <li>{@code checkAdmitted}, {@code checkDenied}: a whole in-process decision, {@link DecisionService#check} of a
 *       parsed one-descriptor request on the in-memory store (rule matching, store key, the store, the counter and,
 *       when denied, the sketch): what the sketch is a fraction of.</li>
 * </ul>
 *
 * {@link #keys} {@code HOT}: every call on one key ({@code shop|user=hot}); {@code SPREAD}: a key out of 1,000,000
 * per call, built per call as a request's store key is ({@code "shop|user=" + id}, so its hash is computed in the
 * sketch as it would be), which makes nearly every denial an eviction in the sketch (its slowest path);
 * {@code keyOnly} is building that key alone. The sketch runs on the system clock, so its 10-second steps roll over
 * (and are cleared) during the run as in service. {@link DashboardRecording1Thread} and
 * {@link DashboardRecording2Threads} run these with 1 and 2 threads.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@State(Scope.Benchmark)
public abstract class DashboardRecording {
    static final String RULES = """
            domain: shop
            descriptors:
              - key: user          # one per hour: every call after the first of a key is denied
                rate_limit: {unit: hour, requests_per_unit: 1}
              - key: free          # never denies
                rate_limit: {algorithm: token_bucket, unit: second, requests_per_unit: 1000000000}
            """;
    static final int SPREAD_KEYS = 1_000_000;

    /** Which keys are denied. */
    public enum Keys {
        HOT,
        SPREAD
    }

    @Param({"HOT", "SPREAD"})
    public Keys keys;

    ServerMetrics metrics;
    DeniedKeys sketch;
    RateLimiter store;
    DecisionService service;
    CheckRequest admitted;
    CheckRequest deniedHot;

    @Setup(Level.Trial)
    public void setUp() throws ConfigException {
        metrics = new ServerMetrics();
        sketch = new DeniedKeys(Ticker.system());
        store = InMemoryRateLimiter.create();
        service = new DecisionService(store, "memory", RuleSet.parse("bench", RULES), 250_000_000L, 64, metrics);
        admitted = request("free", "hot");
        deniedHot = request("user", "hot");
        service.check(deniedHot).join(); // the hot key's one admission
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        store.close();
    }

    static CheckRequest request(String key, String value) {
        return new CheckRequest("shop", List.of(new CheckRequest.Descriptor(List.of(new Entry(key, value)), 1, null)));
    }

    /** The key of this call: the hot one, or one of a million built now. */
    String key() {
        return keys == Keys.HOT
                ? "shop|user=hot"
                : "shop|user=" + ThreadLocalRandom.current().nextInt(SPREAD_KEYS);
    }

    @Benchmark
    public String keyOnly(Outcomes outcomes) {
        outcomes.count(false);
        return key();
    }

    @Benchmark
    public void admitCounter(Outcomes outcomes) {
        metrics.decision("shop", "shop.user", Outcome.OK);
        outcomes.count(true);
    }

    @Benchmark
    public void denyCounter(Outcomes outcomes) {
        metrics.decision("shop", "shop.user", Outcome.OVER_LIMIT);
        outcomes.count(false);
    }

    @Benchmark
    public String denyRecorded(Outcomes outcomes) {
        String key = key();
        metrics.decision("shop", "shop.user", Outcome.OVER_LIMIT);
        sketch.record(key);
        outcomes.count(false);
        return key;
    }

    @Benchmark
    public String recordOnly(Outcomes outcomes) {
        String key = key();
        sketch.record(key);
        outcomes.count(false);
        return key;
    }

    @Benchmark
    public CheckResult checkAdmitted(Outcomes outcomes) {
        CheckResult r = service.check(admitted).join();
        outcomes.count(r.allowed());
        return r;
    }

    @Benchmark
    public CheckResult checkDenied(Outcomes outcomes) {
        CheckRequest request = keys == Keys.HOT
                ? deniedHot
                : request("user", Integer.toString(ThreadLocalRandom.current().nextInt(SPREAD_KEYS)));
        CheckResult r = service.check(request).join();
        outcomes.count(r.allowed());
        return r;
    }
}
