package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.tck.ForwardingRateLimiter;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Reservations, settles and slots in {@code GET /metrics}: exact counts after a known sequence of calls on Sluice's
 * HTTP API ({@code sluice-stream-done.yaml}: domain {@code metered}, a token bucket of 100 a minute), and what a store
 * that fails during a settle or a slot step shows (the failure policy's degraded counts).
 */
class StepMetricsHttpTest {
    private static final long LEASE = 10_000_000_000L; // 10 s
    private static final String USER = "\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"42\"}]}]";

    private TestServer s;

    @AfterEach
    void stop() {
        if (s != null) {
            s.close();
        }
    }

    private static int reserve(TestServer s, long estimate, String id) {
        return s.post("{\"domain\":\"metered\",\"hits\":" + estimate + ",\"reservation\":{\"id\":\"" + id + "\"},"
                        + USER + "}")
                .status();
    }

    private static TestServer.Resp settle(TestServer s, String id, long actual) {
        TestServer.Resp r = s.postTo(
                "/v1/settle",
                "{\"domain\":\"metered\",\"reservation\":{\"id\":\"" + id + "\"},\"actual\":" + actual + "," + USER
                        + "}");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        return r;
    }

    private static int slot(TestServer s, String op, String holder, long max) {
        return s.postTo(
                        "/v1/in-flight/" + op,
                        "{\"domain\":\"gpu\",\"key\":\"tenant-7\",\"max_in_flight\":" + max + ",\"holder\":\"" + holder
                                + "\",\"lease_ns\":" + LEASE + "}")
                .status();
    }

    private static boolean held(TestServer s, String op, String holder) {
        TestServer.Resp r = s.postTo(
                "/v1/in-flight/" + op,
                "{\"domain\":\"gpu\",\"key\":\"tenant-7\",\"holder\":\"" + holder + "\""
                        + (op.equals("renew") ? ",\"lease_ns\":" + LEASE : "") + "}");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        return r.json().get("held").asBoolean();
    }

    /** The value of one sample (a name with its labels, sorted, as the exposition writes them); 0 when absent. */
    static double sample(String exposition, String sample) {
        Matcher m =
                Pattern.compile("(?m)^" + Pattern.quote(sample) + " (\\S+)$").matcher(exposition);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private String scrape() {
        TestServer.Resp r = s.get("/metrics");
        assertThat(r.status()).isEqualTo(200);
        return r.body();
    }

    private static String settles(String outcome) {
        return "sluice_settles_total{domain=\"metered\",outcome=\"" + outcome + "\",rule=\"metered.user\"}";
    }

    private static String reservations(String outcome) {
        return "sluice_reservations_total{domain=\"metered\",outcome=\"" + outcome + "\",rule=\"metered.user\"}";
    }

    private static String slots(String step, String outcome) {
        return "sluice_in_flight_steps_total{domain=\"gpu\",outcome=\"" + outcome + "\",step=\"" + step + "\"}";
    }

    /**
     * On domain {@code metered} (100 a minute): 4 estimates reserved or denied (3 reserved, 1 denied) and 6 settles
     * (1 gave 18 back, 1 charged 30 more, 1 at its estimate, 2 not pending); on domain {@code gpu}: 4 acquires
     * (3 acquired, one of them a renewal by its holder, 1 denied), 2 releases (1 released, 1 not held), 2 renewals
     * (1 renewed, 1 not held).
     */
    static void knownSequence(TestServer s) {
        assertThat(reserve(s, 30, "r-1")).isEqualTo(200); // 70 left
        assertThat(settle(s, "r-1", 12).json().get("adjusted").asLong()).isEqualTo(-18); // 88 left
        assertThat(settle(s, "r-1", 50).json().get("settled").asBoolean()).isFalse(); // settled already
        assertThat(reserve(s, 90, "r-2")).isEqualTo(429); // 88 left: denied, nothing pending
        assertThat(settle(s, "r-2", 5).json().get("settled").asBoolean()).isFalse();
        assertThat(reserve(s, 20, "r-3")).isEqualTo(200); // 68 left
        assertThat(settle(s, "r-3", 50).json().get("adjusted").asLong()).isEqualTo(30);
        assertThat(reserve(s, 10, "r-4")).isEqualTo(200);
        assertThat(settle(s, "r-4", 10).json().get("adjusted").asLong()).isZero();

        assertThat(slot(s, "acquire", "a", 2)).isEqualTo(200);
        assertThat(slot(s, "acquire", "b", 2)).isEqualTo(200);
        assertThat(slot(s, "acquire", "c", 2)).isEqualTo(429);
        assertThat(slot(s, "acquire", "a", 2)).as("a renews the slot it holds").isEqualTo(200);
        assertThat(held(s, "release", "a")).isTrue();
        assertThat(held(s, "release", "a")).isFalse();
        assertThat(held(s, "renew", "b")).isTrue();
        assertThat(held(s, "renew", "nobody")).isFalse();
    }

    @Test
    void reservationsSettlesAndSlotStepsAreCountedByOutcome() {
        s = TestServer.start("sluice-stream-done.yaml");
        knownSequence(s);

        String m = scrape();
        assertThat(sample(m, reservations("reserved"))).isEqualTo(3);
        assertThat(sample(m, reservations("denied"))).isEqualTo(1);
        assertThat(sample(m, settles("gave_back"))).isEqualTo(1);
        assertThat(sample(m, settles("charged_more"))).isEqualTo(1);
        assertThat(sample(m, settles("at_estimate"))).isEqualTo(1);
        assertThat(sample(m, settles("not_pending"))).isEqualTo(2);
        String permits =
                "sluice_settle_adjusted_permits_total{direction=\"%s\",domain=\"metered\",rule=\"metered.user\"}";
        assertThat(sample(m, permits.formatted("given_back"))).isEqualTo(18);
        assertThat(sample(m, permits.formatted("charged_more"))).isEqualTo(30);
        assertThat(sample(m, slots("acquire", "acquired"))).isEqualTo(3);
        assertThat(sample(m, slots("acquire", "denied"))).isEqualTo(1);
        assertThat(sample(m, slots("release", "released"))).isEqualTo(1);
        assertThat(sample(m, slots("release", "not_held"))).isEqualTo(1);
        assertThat(sample(m, slots("renew", "renewed"))).isEqualTo(1);
        assertThat(sample(m, slots("renew", "not_held"))).isEqualTo(1);
        // the reservations are decisions too; a settle is not
        assertThat(sample(m, "sluice_decisions_total{domain=\"metered\",outcome=\"ok\",rule=\"metered.user\"}"))
                .isEqualTo(3);
        // Sluice's own API counts nothing in envoy's stats
        assertThat(s.server
                        .service()
                        .metrics()
                        .envoyStats()
                        .total("ratelimit.service.rate_limit.metered.user.total_hits"))
                .isZero();
    }

    @Test
    void aStreamDoneRuleOnSluicesApiCountsItsReservationAndSettleButNoEnvoyStats() {
        s = TestServer.start("sluice-stream-done.yaml");
        String body =
                "{\"domain\":\"llm\",\"hits\":%d,\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"u1\"},"
                        + "{\"key\":\"request_id\",\"value\":\"r1\"}]}]}";
        assertThat(s.post(body.formatted(500)).status()).isEqualTo(200);
        assertThat(s.post(body.formatted(200)).status()).isEqualTo(200);
        String m = scrape();
        assertThat(sample(m, "sluice_reservations_total{domain=\"llm\",outcome=\"reserved\",rule=\"llm.user\"}"))
                .isEqualTo(1);
        assertThat(sample(m, "sluice_settles_total{domain=\"llm\",outcome=\"gave_back\",rule=\"llm.user\"}"))
                .isEqualTo(1);
        assertThat(s.server.service().metrics().envoyStats().total("ratelimit.service.rate_limit.llm.user.total_hits"))
                .isZero();
    }

    /** Denied slots and settles that found nothing pending are answers, not errors: nothing is logged per request. */
    @Test
    void denialsAndSettlesOfNothingLogNothing() {
        s = TestServer.start("sluice-stream-done.yaml");
        ch.qos.logback.classic.Logger root =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        try {
            knownSequence(s);
            assertThat(sample(scrape(), slots("acquire", "denied"))).isEqualTo(1);
        } finally {
            root.detachAppender(logged);
        }
        assertThat(logged.list)
                .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
                .as("lines at INFO or above")
                .isEmpty();
    }

    /** A store whose settles and slots fail with an error that leaves its circuit closed (it answers otherwise). */
    private static RateLimiter failingSettlesAndSlots() {
        StoreException failure = new StoreException("the test's store failed", null, Degradation.STORE_ERROR);
        return new ForwardingRateLimiter(InMemoryRateLimiter.create()) {
            @Override
            public Settlement settle(String key, Limit limit, String id, long actual) {
                throw failure;
            }

            @Override
            public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String id, long actual) {
                return CompletableFuture.failedFuture(failure);
            }

            @Override
            public InFlightLimiter inFlight() {
                throw failure;
            }
        };
    }

    @Test
    void settlesAndSlotStepsTheStoreCouldNotMakeAreCountedDegraded() {
        RateLimiter failOpen = FailSafeRateLimiter.builder(failingSettlesAndSlots())
                .policy(FailurePolicy.FAIL_OPEN)
                .build();
        s = TestServer.startWith(failOpen, UnaryOperator.identity(), "sluice-stream-done.yaml");
        String degraded = "sluice_degraded_decisions_total{cause=\"store_error\"}";
        assertThat(sample(scrape(), degraded)).isZero();

        assertThat(reserve(s, 30, "r-1")).isEqualTo(200); // the store reserves
        assertThat(settle(s, "r-1", 10).json().get("settled").asBoolean())
                .as("a settle the store could not make: its estimate stands")
                .isFalse();
        assertThat(slot(s, "acquire", "a", 1)).as("fail open").isEqualTo(200);
        assertThat(held(s, "release", "a")).isFalse();
        assertThat(held(s, "renew", "a")).as("fail open: the work may go on").isTrue();

        String m = scrape();
        assertThat(sample(m, degraded))
                .as("the settle, the acquire, the release and the renewal")
                .isEqualTo(4);
        assertThat(sample(m, settles("not_pending"))).isEqualTo(1);
        assertThat(sample(m, slots("acquire", "acquired"))).isEqualTo(1);
        assertThat(sample(m, slots("release", "not_held"))).isEqualTo(1);
        assertThat(sample(m, slots("renew", "renewed"))).isEqualTo(1);
        assertThat(s.get("/v1/dashboard")
                        .json()
                        .get("store")
                        .get("degraded")
                        .get("store_error")
                        .asLong())
                .isEqualTo(4);
    }
}
