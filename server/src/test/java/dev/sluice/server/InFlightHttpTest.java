package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.tck.ForwardingRateLimiter;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Work in flight over Sluice's HTTP API: {@code POST /v1/in-flight/acquire} (200 / 429 with the decision and
 * Retry-After), {@code /release} and {@code /renew} ({@code held}), on the service's store and its clock; a failure
 * policy answering when the store cannot, a store without slots (501), leases skipped; and bad input, a 400 problem
 * naming the value and the fix that changes nothing.
 */
class InFlightHttpTest {
    private static final long LEASE = 10_000_000_000L; // 10 s

    private TestServer s;

    @AfterEach
    void stop() {
        if (s != null) {
            s.close();
        }
    }

    private TestServer.Resp post(String op, String body) {
        return TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/v1/in-flight/" + op))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    private TestServer.Resp acquire(String domain, long max, String holder, long leaseNanos) {
        return post(
                "acquire",
                "{\"domain\":\"" + domain + "\",\"key\":\"tenant-7\",\"max_in_flight\":" + max + ",\"holder\":\""
                        + holder + "\",\"lease_ns\":" + leaseNanos + "}");
    }

    private TestServer.Resp acquire(long max, String holder) {
        return acquire("api", max, holder, LEASE);
    }

    private boolean release(String holder) {
        TestServer.Resp r = post("release", "{\"domain\":\"api\",\"key\":\"tenant-7\",\"holder\":\"" + holder + "\"}");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        return r.json().get("held").asBoolean();
    }

    private boolean renew(String holder, long leaseNanos) {
        TestServer.Resp r = post(
                "renew",
                "{\"domain\":\"api\",\"key\":\"tenant-7\",\"holder\":\"" + holder + "\",\"lease_ns\":" + leaseNanos
                        + "}");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        return r.json().get("held").asBoolean();
    }

    private static JsonNode decision(TestServer.Resp r) {
        return r.json().get("decision");
    }

    @Test
    void atMostTheMaximumIsHeldAndAReleaseFreesTheSlotOnce() {
        s = TestServer.start("sluice-stream-done.yaml");
        TestServer.Resp a = acquire(2, "a");
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.header("Content-Type")).isEqualTo("application/json");
        assertThat(a.json().get("overall_code").asText()).isEqualTo("OK");
        assertThat(a.json().has("degraded")).isFalse();
        assertThat(decision(a).get("allowed").asBoolean()).isTrue();
        assertThat(decision(a).get("limit").asLong()).isEqualTo(2);
        assertThat(decision(a).get("remaining").asLong()).isEqualTo(1);
        assertThat(decision(a).get("reset_after_ns").asLong()).isEqualTo(LEASE);
        assertThat(acquire(2, "b").status()).isEqualTo(200);
        s.clock().advance(Duration.ofSeconds(3));

        TestServer.Resp c = acquire(2, "c");
        assertThat(c.status()).as(c.body()).isEqualTo(429);
        assertThat(c.json().get("overall_code").asText()).isEqualTo("OVER_LIMIT");
        assertThat(decision(c).get("allowed").asBoolean()).isFalse();
        assertThat(decision(c).get("remaining").asLong()).isZero();
        assertThat(decision(c).get("retry_after_ns").asLong())
                .as("until a's lease ends")
                .isEqualTo(7_000_000_000L);
        assertThat(c.header("Retry-After")).isEqualTo("7");

        TestServer.Resp again = acquire(2, "a");
        assertThat(again.status()).as("a holder's retry renews its slot").isEqualTo(200);
        assertThat(decision(again).get("remaining").asLong()).isZero();
        assertThat(release("a")).isTrue();
        assertThat(release("a")).as("once").isFalse();
        assertThat(release("never")).isFalse();
        assertThat(acquire(2, "c").status()).isEqualTo(200);
        assertThat(acquire(2, "d").status()).isEqualTo(429);
    }

    @Test
    void aLeaseEndsByTheServiceClockAndRenewExtendsItFromNow() {
        s = TestServer.start("sluice-stream-done.yaml");
        assertThat(acquire(1, "a").status()).isEqualTo(200);
        s.clock().advance(Duration.ofSeconds(5));
        assertThat(renew("a", LEASE)).isTrue();
        s.clock().advance(Duration.ofSeconds(9));
        TestServer.Resp b = acquire(1, "b");
        assertThat(b.status()).as("a's renewed lease has 1 s left").isEqualTo(429);
        assertThat(decision(b).get("retry_after_ns").asLong()).isEqualTo(1_000_000_000L);
        s.clock().advance(Duration.ofSeconds(1));
        assertThat(renew("a", LEASE)).as("the lease ended").isFalse();
        assertThat(acquire(1, "b").status()).isEqualTo(200);
        assertThat(release("a")).isFalse();
    }

    @Test
    void domainsDoNotShareSlots() {
        s = TestServer.start("sluice-stream-done.yaml");
        assertThat(acquire("metered", 1, "a", LEASE).status()).isEqualTo(200);
        assertThat(acquire("metered", 1, "b", LEASE).status()).isEqualTo(429);
        assertThat(acquire("other", 1, "b", LEASE).status())
                .as("another domain")
                .isEqualTo(200);
        assertThat(acquire("other", 1, "c", LEASE).status()).isEqualTo(429);
    }

    @Test
    void badInputIsA400NamingTheValueAndTheFixAndChangesNothing() {
        s = TestServer.start("sluice-stream-done.yaml");
        assertThat(acquire(1, "a").status()).isEqualTo(200);
        assertProblem(acquire(0, "b"), "'max_in_flight' must be a whole number from 1");
        assertProblem(acquire(-3, "b"), "not a number -3");
        assertProblem(acquire("api", 1, "b", 0), "'lease_ns' must be a whole number from 1 to 86400000000000");
        assertProblem(acquire("api", 1, "b", 86_400_000_000_001L), "86400000000001");
        assertProblem(acquire(1, "has space"), "holder id 'has space' has a character other than visible");
        assertProblem(acquire(1, ""), "'holder' is empty");
        assertProblem(acquire(1, "x".repeat(200)), "200 characters");
        assertProblem(
                post(
                        "acquire",
                        "{\"domain\":\"api\",\"key\":\"\",\"max_in_flight\":1,\"holder\":\"b\",\"lease_ns\":1}"),
                "'key' is empty");
        assertProblem(
                post(
                        "acquire",
                        "{\"domain\":\"api\",\"key\":\"k\",\"max_in_flight\":\"1\",\"holder\":\"b\","
                                + "\"lease_ns\":1}"),
                "not a string \"1\"");
        assertProblem(post("release", "{\"domain\":\"api\",\"key\":\"tenant-7\"}"), "'holder' is missing");
        assertProblem(post("renew", "{\"domain\":\"api\",\"key\":\"tenant-7\",\"holder\":\"a\"}"), "'lease_ns'");
        assertProblem(post("release", "{\"key\":\"tenant-7\",\"holder\":\"a\"}"), "'domain' is missing");
        TestServer.Resp unknown =
                post("release", "{\"domain\":\"api\",\"key\":\"tenant-7\",\"holder\":\"a\",\"lease_ns\":5}");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().get("detail").asText()).contains("unknown field 'lease_ns'");

        TestServer.Resp still = acquire(1, "a");
        assertThat(decision(still).get("remaining").asLong())
                .as("a still holds its one slot")
                .isZero();
        assertThat(acquire(1, "b").status()).isEqualTo(429);
    }

    @Test
    void theFailurePolicyAnswersAnAcquireTheStoreCannotMake() {
        RateLimiter down = new ForwardingRateLimiter(InMemoryRateLimiter.create()) {
            @Override
            public InFlightLimiter inFlight() {
                throw new StoreException("the test's store is down", null, Degradation.UNAVAILABLE);
            }
        };
        RateLimiter failClosed = FailSafeRateLimiter.builder(down)
                .policy(FailurePolicy.FAIL_CLOSED)
                .probeInterval(Duration.ofSeconds(5))
                .build();
        s = TestServer.startWith(failClosed, UnaryOperator.identity(), "sluice-stream-done.yaml");
        TestServer.Resp r = acquire(3, "a");
        assertThat(r.status()).as(r.body()).isEqualTo(429);
        assertThat(r.json().get("degraded").asText()).isEqualTo("unavailable");
        assertThat(r.header("Sluice-Degraded")).isEqualTo("unavailable");
        assertThat(r.header("Retry-After")).isEqualTo("5");
        assertThat(decision(r).get("limit").asLong()).isEqualTo(3);
        assertThat(release("a")).as("FAIL_CLOSED: no slot was taken").isFalse();
    }

    @Test
    void aStoreWithoutSlotsAnswers501AndLeasesAreSkipped() {
        RateLimiter none = new ForwardingRateLimiter(InMemoryRateLimiter.create()) {
            @Override
            public InFlightLimiter inFlight() {
                throw new UnsupportedOperationException("this test's store does not limit work in flight");
            }
        };
        s = TestServer.startWith(none, UnaryOperator.identity(), "sluice-stream-done.yaml");
        TestServer.Resp r = acquire(1, "a");
        assertThat(r.status()).as(r.body()).isEqualTo(501);
        assertThat(r.json().get("detail").asText()).contains("does not limit work in flight");
        s.close();

        // leases hand out permits locally; slots are counted at the store behind them
        s = TestServer.startWith(
                LeasedRateLimiter.builder(InMemoryRateLimiter.create()).build(),
                UnaryOperator.identity(),
                "sluice-stream-done.yaml");
        assertThat(acquire(1, "a").status()).isEqualTo(200);
        assertThat(acquire(1, "b").status()).isEqualTo(429);
    }

    private static void assertProblem(TestServer.Resp r, String detail) {
        assertThat(r.status()).as(r.body()).isEqualTo(400);
        assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(r.json().get("type").asText()).isEqualTo("urn:sluice:problem:invalid-in-flight");
        assertThat(r.json().get("detail").asText()).contains(detail);
    }
}
