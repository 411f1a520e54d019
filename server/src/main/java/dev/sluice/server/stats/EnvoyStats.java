package dev.sluice.server.stats;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * envoyproxy/ratelimit's stats, counted as its service counts them, under its names: per rule
 * {@code ratelimit.service.rate_limit.<key>.total_hits}, {@code over_limit}, {@code near_limit},
 * {@code within_limit} and {@code shadow_mode}; {@code ratelimit.service.config_load_success} and
 * {@code config_load_error}; {@code ratelimit.service.global_shadow_mode} (answers OK'd by envoy's global
 * {@code SHADOW_MODE}); {@code ratelimit.service.call.should_rate_limit.redis_error} and {@code service_error}.
 *
 * <p>The {@code <key>} is envoy's stat key of the rule that decided: the domain, then each level's descriptor key
 * with {@code _value} appended when the rule gives a value ({@code test-domain.key1_value1.subkey1}); the decision
 * service hands over the label {@link dev.sluice.server.config.DomainRules#match} builds for it, which follows envoy's
 * {@code GetLimit} (wildcards, {@code detailed_metric}, {@code value_to_metric}, {@code share_threshold}). envoy's
 * {@code SanitizeStatName} is applied once per key: {@code :} and {@code |} become {@code _}, as do the dots of an
 * IPv4 address.
 *
 * <p>How much each counter grows is envoy's {@code base_limiter.go}, for a descriptor of {@code h} hits under a limit
 * of {@code C} per window whose count went from {@code before} to {@code after = before + h}, with the near-limit
 * threshold {@code N = floor(C · ratio)} (computed in single precision, as envoy's {@code float32}):
 * <ul>
 *   <li>{@code total_hits += h};</li>
 *   <li>within the limit ({@code after ≤ C}): {@code within_limit += h}, and {@code near_limit} grows by the hits past
 *       {@code N}: {@code h} if {@code before ≥ N}, else {@code after − N} when {@code after > N};</li>
 *   <li>over it ({@code after > C}): {@code over_limit} grows by the hits past {@code C} ({@code h} if
 *       {@code before ≥ C}, else {@code after − C}), {@code near_limit} by those between {@code N} and {@code C}
 *       ({@code C − max(N, before)}, when {@code before < C}), and {@code shadow_mode} by the same as
 *       {@code over_limit} when the rule is in shadow mode; {@code within_limit} not at all.</li>
 * </ul>
 * A check-only descriptor ({@code h = 0}) adds nothing, nor does an unlimited rule or a descriptor no rule matched.
 *
 * <p>Memory is bounded: keys come from the rules, not from the values callers send, except under
 * {@code detailed_metric} or {@code value_to_metric}, which envoy puts in its stat names by design. At most
 * {@value #MAX_KEYS} keys are kept; descriptors of further keys are counted under the key {@value #OTHER_KEY}.
 *
 * <p>Counting is a few {@link LongAdder} increments after one map lookup of a string the rule already holds: nothing
 * on the decision path waits for a sink. The sinks read the counters: {@link StatsdSink} the growth since its last
 * flush, {@link EnvoyPrometheus} the totals, {@link #writeText} the totals as envoy's debug port prints variables.
 */
public final class EnvoyStats {
    /** The most distinct stat keys kept; see the class comment. */
    public static final int MAX_KEYS = 10_000;

    /** The key of descriptors counted past {@link #MAX_KEYS}. */
    public static final String OTHER_KEY = "_other";

    /** envoy's {@code NEAR_LIMIT_RATIO} default. */
    public static final float DEFAULT_NEAR_LIMIT_RATIO = 0.8f;

    static final String RATE_LIMIT_PREFIX = "ratelimit.service.rate_limit.";
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");

    /** One counter: its full statsd name and its total. */
    static final class Counter {
        final String name;
        final LongAdder total = new LongAdder();

        Counter(String name) {
            this.name = name;
        }

        void add(long n) {
            if (n != 0) {
                total.add(n);
            }
        }
    }

    /** The five counters of one stat key. */
    private static final class KeyCounters {
        final Counter totalHits;
        final Counter overLimit;
        final Counter nearLimit;
        final Counter withinLimit;
        final Counter shadowMode;

        KeyCounters(EnvoyStats stats, String key) {
            String base = RATE_LIMIT_PREFIX + sanitize(key) + '.';
            totalHits = stats.counter(base + "total_hits");
            overLimit = stats.counter(base + "over_limit");
            nearLimit = stats.counter(base + "near_limit");
            withinLimit = stats.counter(base + "within_limit");
            shadowMode = stats.counter(base + "shadow_mode");
        }
    }

    private final float nearLimitRatio;
    private final ConcurrentHashMap<String, KeyCounters> keys = new ConcurrentHashMap<>();
    /** Every counter by its full name, in no order; what the sinks read. */
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

    private final Counter configLoadSuccess = counter("ratelimit.service.config_load_success");
    private final Counter configLoadError = counter("ratelimit.service.config_load_error");
    private final Counter globalShadowMode = counter("ratelimit.service.global_shadow_mode");
    private final Counter redisError = counter("ratelimit.service.call.should_rate_limit.redis_error");
    private final Counter serviceError = counter("ratelimit.service.call.should_rate_limit.service_error");

    /** With envoy's default near-limit ratio, 0.8. */
    public EnvoyStats() {
        this(DEFAULT_NEAR_LIMIT_RATIO);
    }

    /**
     * @param nearLimitRatio envoy's {@code NEAR_LIMIT_RATIO}: the share of a limit past which hits are near it, in
     *                       (0, 1]
     */
    public EnvoyStats(float nearLimitRatio) {
        if (!(nearLimitRatio > 0 && nearLimitRatio <= 1)) {
            throw new IllegalArgumentException(
                    "near-limit ratio " + nearLimitRatio + " is not in (0, 1]: give a share of the limit, e.g. 0.8");
        }
        this.nearLimitRatio = nearLimitRatio;
    }

    public float nearLimitRatio() {
        return nearLimitRatio;
    }

    private Counter counter(String name) {
        return counters.computeIfAbsent(name, Counter::new);
    }

    /**
     * Counts one descriptor's hits under its rule, as envoy's limiter does (see the class comment).
     *
     * @param key    envoy's stat key of the rule ({@code domain.key_value.subkey})
     * @param shadow the rule is in shadow mode
     * @param limit  the rule's requests per unit ({@code C}; 0 for a rule that bans)
     * @param hits   the descriptor's hits ({@code h})
     * @param before the window's count before these hits
     * @param after  the count after them, {@code before + h} (a count that saturated may say more)
     */
    public void counted(String key, boolean shadow, long limit, long hits, long before, long after) {
        if (hits <= 0) {
            return;
        }
        KeyCounters k = keys.get(key);
        if (k == null) {
            k = keys.size() >= MAX_KEYS && !keys.containsKey(key)
                    ? keys.computeIfAbsent(OTHER_KEY, o -> new KeyCounters(this, o))
                    : keys.computeIfAbsent(key, o -> new KeyCounters(this, o));
        }
        long near = nearThreshold(limit);
        k.totalHits.add(hits);
        if (after > limit) {
            long over = before >= limit ? hits : after - limit;
            k.overLimit.add(over);
            if (before < limit) {
                k.nearLimit.add(limit - Math.max(near, before));
            }
            if (shadow) {
                k.shadowMode.add(over);
            }
        } else {
            if (after > near) {
                k.nearLimit.add(before >= near ? hits : after - near);
            }
            k.withinLimit.add(hits);
        }
    }

    /** envoy's {@code floor(float32(C) * nearLimitRatio)}: single-precision product, then floored. */
    long nearThreshold(long limit) {
        return (long) Math.floor((float) limit * nearLimitRatio);
    }

    /** A rules load (the first one, or a reload): applied, or refused as invalid. */
    public void configLoad(boolean applied) {
        (applied ? configLoadSuccess : configLoadError).add(1);
    }

    /** A request over the limit answered OK by envoy's global shadow mode ({@code SHADOW_MODE}). */
    public void globalShadowMode() {
        globalShadowMode.add(1);
    }

    /**
     * A {@code ShouldRateLimit} call that failed: {@code redis_error} when the store failed it (envoy's name for its
     * backend, whatever the store), {@code service_error} for the rest (a request without a domain or descriptors).
     */
    public void callFailed(boolean byStore) {
        (byStore ? redisError : serviceError).add(1);
    }

    /** The counters, sorted by name (a copy: counters created meanwhile are not in it). */
    List<Counter> counters() {
        List<Counter> out = new ArrayList<>(counters.values());
        out.sort(Comparator.comparing(c -> c.name));
        return out;
    }

    /** The total of the counter of that full name, 0 if it does not exist. */
    public long total(String name) {
        Counter c = counters.get(name);
        return c == null ? 0 : c.total.sum();
    }

    /**
     * The counters that have counted something, one line each, {@code name: total}, sorted by name: the text form
     * envoy's debug port prints its variables in ({@code /stats}).
     */
    public void writeText(StringBuilder out) {
        for (Counter c : counters()) {
            long v = c.total.sum();
            if (v != 0) {
                out.append(c.name).append(": ").append(v).append('\n');
            }
        }
    }

    /** envoy's {@code SanitizeStatName}: {@code :} and {@code |} to {@code _}, and the dots of IPv4 addresses. */
    static String sanitize(String s) {
        String r = s.replace(':', '_').replace('|', '_');
        return IPV4.matcher(r).replaceAll(m -> m.group().replace('.', '_'));
    }
}
